/**
 * The upstream's answer as the gateway passes it on: the headers it keeps,
 * or, when there is no answer, the error (502 or 504) it throws instead.
 *
 * @module
 */
import { GatewayError } from "./gateway_error.ts";
import type { WireSpec } from "./wires/wire_spec.ts";
import type { ModelGatewayStats } from "./options.ts";
import type { UpstreamResponse } from "./upstream_response.ts";

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
export function answerHeaders(
  res: Pick<UpstreamResponse, "headers">,
): Record<string, string> {
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
 * The error for a request that got no answer: the client went away (502),
 * the upstream was too slow (504) or could not be reached (502); counted in
 * `stats`.
 *
 * @param f What failed.
 * @param stats The gateway's counters (`client_aborts`, `upstream_errors`).
 * @returns The error (the caller records it, then throws it).
 */
export function upstreamFailure(
  f: UpstreamFailure,
  stats: ModelGatewayStats,
): GatewayError {
  const origin = new URL(f.url).origin;
  if (f.client?.aborted) {
    stats.client_aborts++;
    return new GatewayError(
      f.family,
      "client_gone",
      "The client went away",
      f.err,
    );
  }
  stats.upstream_errors++;
  if (f.timeout.aborted) {
    return new GatewayError(
      f.family,
      "upstream_timeout",
      `The upstream ${origin} did not answer within ${f.timeoutMs} ms (the gateway's upstream time-out)`,
      f.err,
    );
  }
  const reason = f.err instanceof Error ? f.err.message : String(f.err);
  return new GatewayError(
    f.family,
    "upstream_unreachable",
    `The model gateway could not reach the upstream ${origin}: ${
      reason.replaceAll(f.url, origin)
    } (check serve --upstream-${f.family.upstream.name})`,
    f.err,
  );
}
