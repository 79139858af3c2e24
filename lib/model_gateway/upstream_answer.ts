/**
 * The upstream's answer as the gateway passes it on: the headers it keeps,
 * or, when there is no answer, the 502 or 504 it says instead.
 *
 * @module
 */
import { apiError, type GatewayAnswer } from "./api_errors.ts";
import type { WireSpec } from "./wires/wire_spec.ts";
import type { ModelGatewayStats } from "./options.ts";

/** Answer headers the server writes itself (or that no longer hold). */
const DROP_ANSWER = new Set([
  "connection",
  "keep-alive",
  "transfer-encoding",
  "content-length",
  "content-encoding",
  "date",
]);

/**
 * The headers of an upstream answer the client gets (lower-case names).
 *
 * @param res The upstream's answer.
 * @returns Its headers but those the server writes itself.
 */
export function answerHeaders(res: Response): Record<string, string> {
  const out: Record<string, string> = {};
  res.headers.forEach((v, k) => {
    if (!DROP_ANSWER.has(k)) out[k] = v;
  });
  return out;
}

/** What failed on the way to the upstream. */
export interface UpstreamFailure {
  /** The wire (its error shape, its upstream's flag). */
  family: WireSpec;
  /** The upstream URL asked (only its origin is said). */
  url: string;
  /** What fetch or the body read threw. */
  err: unknown;
  /** The client's signal (aborted when it went away). */
  client: AbortSignal | undefined;
  /** The time-out's signal. */
  timeout: AbortSignal;
  /** The time-out, in ms (said in the 504). */
  timeoutMs: number;
}

/**
 * 502 (unreachable, or the client went away) or 504 (too slow), in the
 * API's shape; counted in `stats`.
 *
 * @param f What failed.
 * @param stats The gateway's counters (`client_aborts`, `upstream_errors`).
 * @returns The answer for the client.
 */
export function upstreamFailure(
  f: UpstreamFailure,
  stats: ModelGatewayStats,
): GatewayAnswer {
  const origin = new URL(f.url).origin;
  if (f.client?.aborted) {
    stats.client_aborts++;
    return apiError(f.family, { status: 502, message: "The client went away" });
  }
  stats.upstream_errors++;
  if (f.timeout.aborted) {
    return apiError(f.family, {
      status: 504,
      message:
        `The upstream ${origin} did not answer within ${f.timeoutMs} ms (the gateway's upstream time-out)`,
    });
  }
  const reason = f.err instanceof Error ? f.err.message : String(f.err);
  return apiError(f.family, {
    status: 502,
    message: `The model gateway could not reach the upstream ${origin}: ${
      reason.replaceAll(f.url, origin)
    } (check serve --upstream-${f.family.upstream.name})`,
  });
}
