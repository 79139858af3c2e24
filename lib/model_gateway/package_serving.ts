/**
 * Serving a compiled package inside an unmodified agent: a request under a
 * package is answered by the package (its due lookups), or forwarded with
 * the state-changing tools narrowed and the model's state-changing calls
 * checked before the client sees them, or, when the package does not fit,
 * handed back to go the plain way.
 *
 * @module
 */
import { type GatewayAnswer, recordedError } from "./api_errors.ts";
import { GatewayError, type GatewayErrorCode } from "./gateway_error.ts";
import type { WireSpec } from "./wires/wire_spec.ts";
import { ANSWER_HEADERS } from "./answer_headers.ts";
import type {
  GatewayRequest,
  RecordedRoute,
  RequestTicket,
} from "./gateway_request.ts";
import type { ModelGatewayContext, ModelGatewayStats } from "./options.ts";
import type { PackageOutcome, RefusedAttempt } from "./recorder.ts";
import type { RecordQueue } from "./record_queue.ts";
import {
  concat,
  headerText,
  readOwn,
  safeJson,
  streamOf,
} from "./exchange_bytes.ts";
import { isObject, type NormResponse } from "./wire_types.ts";
import type { KeptBytes } from "./kept_bytes.ts";
import { SseParser } from "./sse.ts";
import type { ServedPackage, ServingDecision } from "./serving.ts";
import { answerHeaders } from "./upstream_answer.ts";
import { forwardUpstream } from "./upstream_forward.ts";
import type { UpstreamResponse } from "./upstream_response.ts";
import type { Http1Client } from "./http1_client/client.ts";

/** Re-asks after a refused answer, at most. */
const MAX_REASKS = 2;

/** A model request under a package, read and addressed. */
export interface PackagedRequest {
  /** The package served at the request's route. */
  pkg: ServedPackage;
  /** The route's wire and the exchange's reader. */
  route: RecordedRoute;
  /** Which API's error shape. */
  family: WireSpec;
  /** The upstream URL. */
  url: string;
  /** The headers passed on. */
  headers: Headers;
  /** The request body as it came. */
  body: Uint8Array;
  /** The request. */
  req: GatewayRequest;
  /** When it arrived. */
  started: Date;
  /**
   * The request as read on arrival, its capture and episode (null when it
   * cannot be read or recorded: it then goes the plain way).
   */
  ticket: RequestTicket | null;
  /** Why there is no ticket. */
  unreadable?: string;
}

/** What serving a package needs of the gateway. */
export interface PackageServingDeps {
  /** Store, capture choice, limits, redaction. */
  ctx: ModelGatewayContext;
  /** The gateway's counters. */
  stats: ModelGatewayStats;
  /** Where the exchanges go to be recorded. */
  records: RecordQueue;
  /** Milliseconds an upstream may take to answer in full. */
  timeoutMs: number;
  /** The gateway's own client for loopback upstreams, or null. */
  client: Http1Client | null;
  /** The most bytes of one answer read to check it. */
  maxAnswerBytes: number;
  /** The gateway's budget of bytes held (answers being read). */
  kept: KeptBytes;
}

/**
 * Answer a request under a package: answered by the package (its due lookups),
 * or forwarded with the state-changing tools narrowed and the model's
 * state-changing calls checked before the client sees them (a refused
 * answer is asked again with the refusal as the tool's answer, at most
 * twice, then answered in words; an upstream that fails while asked again
 * gets the client the same words, never an error it would not have got
 * without the package). A request the package does not fit
 * comes back as `{skip: reason}`: it goes the plain way (streamed,
 * recorded), with the reason in `x-harness-package-skipped`.
 *
 * @param a The request, read and addressed.
 * @param deps The gateway's context, counters, recording and time-out.
 * @returns The answer, or why the package does not fit.
 * @throws {GatewayError} No answer the client may get (the upstream
 *   unreachable, or its answer could not be checked): recorded, then
 *   thrown.
 */
export async function answerWithPackage(
  a: PackagedRequest,
  deps: PackageServingDeps,
): Promise<GatewayAnswer | { skip: string }> {
  const { stats, records } = deps;
  const { pkg, ticket } = a;
  let decision: ServingDecision;
  try {
    decision = ticket === null
      ? { kind: "skip", reason: a.unreadable ?? "the request cannot be read" }
      : ticket.request.previous_response_id !== null
      ? {
        kind: "skip",
        reason:
          "previous_response_id keeps the conversation upstream: send the whole input to use the package",
      }
      : pkg.decide(ticket.request);
  } catch (err) {
    decision = {
      kind: "skip",
      reason: `the request cannot be read: ${(err as Error).message}`,
    };
  }
  if (decision.kind === "skip" || ticket === null) {
    const reason = decision.kind === "skip"
      ? decision.reason
      : "the request cannot be read";
    stats.passed_through = (stats.passed_through ?? 0) + 1;
    stats.last_pass_through = reason.slice(0, 300);
    return { skip: reason };
  }
  const { request, parsed } = ticket;
  const route = a.route;
  const writer = route.spec.writer;
  const stream = request.stream;
  const usage = isObject(parsed.stream_options) &&
    parsed.stream_options.include_usage === true;
  const base = {
    capture_id: ticket.capture,
    identity: ticket.identity,
    request,
    body: parsed,
    started: a.started,
  };
  const outcome = (
    outcome: PackageOutcome["outcome"],
    reason?: string,
  ): PackageOutcome => ({
    id: pkg.id,
    outcome,
    ...(reason ? { reason: reason.slice(0, 2000) } : {}),
  });
  if (decision.kind === "serve") {
    stats.served = (stats.served ?? 0) + 1;
    const own = writer.answer(
      { text: "", calls: decision.calls, model: request.model },
      { stream, usage },
    );
    const norm = readOwn(route.reader, { own, stream });
    ticket.settle(norm);
    records.ready({
      ...base,
      status: 200,
      response: norm,
      duration_ms: Date.now() - a.started.getTime(),
      served_by: pkg.id,
      package: outcome("served"),
    });
    return {
      status: 200,
      headers: {
        "content-type": own.contentType,
        [ANSWER_HEADERS.served]: "package",
        [ANSWER_HEADERS.package]: headerText(pkg.id),
      },
      body: null,
      raw: own.body,
    };
  }
  let sent = writer.withTools(parsed, decision.narrowing);
  const refused: RefusedAttempt[] = [];
  // An upstream that fails while asked again: the agent gets the gave-up
  // words (without the package it would have had the first answer, not an
  // error).
  let failed: string | null = null;
  for (let attempt = 0; attempt <= MAX_REASKS; attempt++) {
    const got = await forwardBuffered({ ...a, sent }, deps);
    if ("error" in got && refused.length > 0 && !a.req.signal?.aborted) {
      failed =
        `the upstream could not be reached while asked again (${got.error.status})`;
      break;
    }
    if ("error" in got) {
      // No answer reached the client (the same request again is a retry);
      // the answers refused before are recorded all the same.
      ticket.settle(null);
      records.ready({
        ...base,
        body: sent,
        status: got.error.status,
        response: null,
        duration_ms: Date.now() - a.started.getTime(),
        refused_attempts: refused,
        error: refused.length > 0
          ? {
            type: "upstream",
            message: "the upstream could not be reached while asking again",
          }
          : recordedError(a.family, got.error),
        package: outcome("forwarded"),
      });
      throw got.error;
    }
    const { res, headers, bytes, chunks } = got;
    const ok = res.status >= 200 && res.status < 300;
    const read = ok ? readChecked(route, { bytes, chunks }) : null;
    if (read && read.problem !== null) {
      // What the gateway cannot read whole, the client never gets.
      ticket.settle(null);
      records.ready({
        ...base,
        body: sent,
        status: res.status,
        response: null,
        duration_ms: Date.now() - a.started.getTime(),
        refused_attempts: refused,
        error: { type: "unchecked", message: read.problem },
        package: outcome("unchecked", read.problem),
      });
      throw unchecked(a, deps, {
        code: "answer_unchecked",
        message:
          `The served package could not check the upstream's answer, so it is not relayed: ${read.problem}`,
      });
    }
    const norm = read?.norm ?? null;
    if (!norm && refused.length > 0) {
      failed = `the upstream answered ${res.status} while asked again`;
      break;
    }
    const refusals = norm ? pkg.check(request, norm.tool_calls) : [];
    if (!norm || refusals.length === 0) {
      ticket.settle(norm);
      records.ready({
        ...base,
        body: sent,
        status: res.status,
        response: norm,
        duration_ms: Date.now() - a.started.getTime(),
        refused_attempts: refused,
        ...(norm
          ? {}
          : { error: a.family.errorOf(safeJson(bytes), res.status) }),
        package: outcome("forwarded"),
      });
      return {
        status: res.status,
        headers,
        body: null,
        ...(chunks ? { stream: streamOf(chunks) } : { raw: bytes }),
      };
    }
    stats.refusals = (stats.refusals ?? 0) + refusals.length;
    refused.push({ response: norm, refusals, status: res.status });
    sent = writer.withRefusals(sent, norm, refusals);
  }
  stats.gave_up = (stats.gave_up ?? 0) + 1;
  const reasons = [
    ...new Set(refused.flatMap((r) => r.refusals.map((x) => x.reason))),
  ];
  const own = writer.answer({
    text: `I cannot do that: ${reasons.join("; ")}.`,
    calls: [],
    model: request.model,
  }, { stream, usage });
  const said = readOwn(route.reader, { own, stream });
  ticket.settle(said);
  records.ready({
    ...base,
    status: 200,
    response: said,
    duration_ms: Date.now() - a.started.getTime(),
    served_by: pkg.id,
    refused_attempts: refused,
    package: outcome(
      "gave_up",
      [...reasons, ...(failed ? [failed] : [])].join("; "),
    ),
  });
  return {
    status: 200,
    headers: {
      "content-type": own.contentType,
      [ANSWER_HEADERS.served]: "package",
      [ANSWER_HEADERS.refused]: String(refused.length),
    },
    body: null,
    raw: own.body,
  };
}

/** Count an answer the package could not check; the error that says so. */
function unchecked(
  a: PackagedRequest,
  deps: PackageServingDeps,
  { code, message }: { code: GatewayErrorCode; message: string },
): GatewayError {
  deps.stats.unchecked = (deps.stats.unchecked ?? 0) + 1;
  deps.stats.last_unchecked = message.slice(0, 300);
  return new GatewayError(a.family, code, message);
}

/** Whether a body is server-sent events, whatever its content type says. */
function looksLikeSse(bytes: Uint8Array): boolean {
  const head = new TextDecoder().decode(bytes.subarray(0, 64)).trimStart();
  return /^(data|event|id|retry):|^:/.test(head);
}

/**
 * An answer read to be checked, every shape the client reads: a stream
 * sent with another content type, a stream cut before its final event
 * (its calls so far), a legacy `function_call`. What cannot be read whole —
 * not the API's shape, or a Chat Completions answer with a choice other
 * than the first (each would need its own check) — is a problem: it is not
 * relayed.
 */
function readChecked(
  route: RecordedRoute,
  { bytes, chunks }: { bytes: Uint8Array; chunks: Uint8Array[] | null },
): { norm: NormResponse | null; problem: string | null } {
  const pieces = chunks ?? (looksLikeSse(bytes) ? [bytes] : null);
  let others = false;
  try {
    if (pieces === null) {
      const json = safeJson(bytes);
      if (route.spec.others?.(json)) others = true;
      const norm = route.reader.response(json);
      return others
        ? { norm, problem: "the answer has more than one choice" }
        : { norm, problem: null };
    }
    const acc = route.reader.streamReader();
    const parser = new SseParser((e, d) => {
      acc.add(e, d);
      if (route.spec.others && !others && d !== "[DONE]") {
        if (route.spec.others(safeJson(new TextEncoder().encode(d)))) {
          others = true;
        }
      }
    });
    for (const c of pieces) parser.push(c);
    parser.end();
    // A stream cut before its final event: the calls it made so far are
    // checked (the client, reading as far as it came, would see them).
    const norm = acc.result();
    return others
      ? { norm, problem: "the answer has more than one choice" }
      : { norm, problem: null };
  } catch (err) {
    return {
      norm: null,
      problem: `the answer is not the API's answer shape (${
        (err as Error).message
      })`,
    };
  }
}

/**
 * One upstream request, its answer read whole to be checked (a stream kept
 * piece by piece, so it is relayed as it came once checked): at most
 * `maxAnswerBytes` (as decompressed), each piece taken from the gateway's
 * budget while it is read; past either, the answer is not relayed (it
 * cannot be checked whole): the error the client gets instead.
 */
async function forwardBuffered(
  a: PackagedRequest & { sent: Record<string, unknown> },
  deps: PackageServingDeps,
): Promise<
  | { error: GatewayError }
  | {
    res: UpstreamResponse;
    headers: Record<string, string>;
    bytes: Uint8Array;
    chunks: Uint8Array[] | null;
  }
> {
  const sent = await forwardUpstream({
    url: a.url,
    method: "POST",
    headers: a.headers,
    body: JSON.stringify(a.sent),
    client: a.req.signal,
  }, {
    family: a.family,
    timeoutMs: deps.timeoutMs,
    stats: deps.stats,
    client: deps.client,
  });
  if ("error" in sent) return { error: sent.error };
  const { res, deadline } = sent;
  let taken = 0;
  try {
    const headers = answerHeaders(res);
    const isStream = (res.headers.get("content-type") ?? "").includes(
      "text/event-stream",
    );
    if (isStream) deps.stats.streams++;
    const chunks: Uint8Array[] = [];
    if (res.body) {
      const pieces = res.body;
      for (let p = await pieces.read(); p !== null; p = await pieces.read()) {
        const over = taken + p.length > deps.maxAnswerBytes;
        if (over || !deps.kept.take(p.length)) {
          await pieces.cancel();
          return {
            error: unchecked(
              a,
              deps,
              over
                ? {
                  code: "answer_unchecked",
                  message:
                    `The upstream's answer is larger than a served package reads to check it (${deps.maxAnswerBytes} bytes): it is not relayed`,
                }
                : {
                  code: "gateway_full",
                  message:
                    "The gateway holds as many answers as it may right now: try again",
                },
            ),
          };
        }
        taken += p.length;
        chunks.push(p);
      }
    }
    return {
      res,
      headers,
      bytes: chunks.length === 1 ? chunks[0] : concat(chunks),
      chunks: isStream ? chunks : null,
    };
  } catch (err) {
    return { error: sent.fail(err) };
  } finally {
    deadline.end();
    // Held only while read and checked: the client's copy is the answer's.
    deps.kept.give(taken);
  }
}
