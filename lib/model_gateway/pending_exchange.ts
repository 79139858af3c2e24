/**
 * A model exchange the gateway answered and the recorder has not yet taken:
 * what its request was given on arrival ({@linkcode Arrival}), what was
 * sent and answered ({@linkcode Pending}), its answer read once
 * ({@linkcode readPendingAnswer}) and the exchange it records as
 * ({@linkcode pendingExchange}).
 *
 * @module
 */
import type { Identity } from "./episode_identity.ts";
import type { Exchange, PackageOutcome } from "./recorder.ts";
import type { NormRequest, NormResponse, WireReader } from "./wire_types.ts";
import { specOfWire } from "./wires/registry.ts";
import { errorOf } from "./exchange_bytes.ts";
import type { StreamKeep } from "./stream_keep.ts";

/** Decodes answers and bodies (one decoder, no state between calls). */
const UTF8 = new TextDecoder();

/** What the gateway gave a request on arrival, beside its identity. */
export interface Arrival {
  /** The id its `model.requested` is recorded under. */
  request_event_id: string;
  /** The request it continues (`model.requested` id, at arrival), or null. */
  previous: string | null;
  /** The fork link's request (at arrival), or null. */
  forked_request: string | null;
  /** The client's keys (scrubbed from what is recorded; never written). */
  keys: string[];
  /** The request body as sent (for a tape). */
  body: Uint8Array | null;
}

/** An exchange answered, waiting to be read and recorded. */
export interface Pending {
  /** The wire's reader. */
  reader: WireReader;
  /** The capture it records into (decided when the request arrived). */
  capture: string;
  /** Its episode and conversation (decided when the request arrived). */
  identity: Identity;
  /** The request as read. */
  request: NormRequest;
  /** The request body as parsed. */
  parsed: unknown;
  /** When the request arrived. */
  started: Date;
  /** When the answer was complete (ms since the epoch). */
  finished?: number;
  /** The upstream's status (the gateway's own for an answer it made). */
  status: number;
  /** A whole answer's bytes (null for a stream, no answer, or one not kept). */
  answer: Uint8Array | null;
  /** A stream's answer, read as it was relayed. */
  stream: StreamKeep | null;
  /** Bytes of the answer taken from the budget of kept bytes. */
  kept: number;
  /** Why the answer was not kept for the record, or null. */
  not_kept?: string | null;
  /** Why a stream ended early, or null. */
  failure: string | null;
  /** The gateway answered an error itself (no upstream answer). */
  error?: { type: string; message: string } | null;
  /** The answer once read (read once: identity or recording, whichever is first). */
  norm?: NormResponse | null;
  /** The stream's final event arrived (set with `norm`). */
  complete?: boolean;
  /** What the package at the route did (a pass-through). */
  package?: PackageOutcome;
}

/**
 * The answer of a pending exchange, read once and kept. With `partial`, a
 * stream still in flight is read as far as it came (not kept).
 *
 * @param p The exchange.
 * @param partial Read a stream in flight.
 * @returns The answer, or null when there is none or it is not readable.
 */
export function readPendingAnswer(
  p: Pending,
  partial = false,
): NormResponse | null {
  if (p.norm !== undefined) return p.norm;
  if (p.error || p.status < 200 || p.status >= 300) return p.norm = null;
  if (p.answer) {
    try {
      p.norm = p.reader.response(
        JSON.parse(UTF8.decode(p.answer)),
      );
    } catch {
      p.norm = null;
    }
    p.complete = p.norm !== null;
    return p.norm;
  }
  if (!p.stream) return p.norm = null;
  const res = p.stream.acc.result();
  if (partial) return res;
  p.norm = res;
  p.complete = p.stream.complete;
  return res;
}

/**
 * A pending exchange as the recorder takes it: its answer read (the request
 * was read when it arrived), or the error that stands for it.
 *
 * @param p The exchange, answered.
 * @returns The exchange to record.
 */
export function pendingExchange(p: Pending): Exchange {
  const ex: Exchange = {
    capture_id: p.capture,
    identity: p.identity,
    request: p.request,
    body: p.parsed,
    started: p.started,
    status: p.status,
    response: null,
    duration_ms: (p.finished ?? Date.now()) - p.started.getTime(),
    ...(p.package ? { package: p.package } : {}),
  };
  if (p.error) {
    ex.error = p.error;
    return ex;
  }
  const ok = p.status >= 200 && p.status < 300;
  if (p.not_kept && !p.stream) {
    ex.error = { type: "not_kept", message: p.not_kept };
    return ex;
  }
  if (p.answer) {
    if (!ok) {
      let json: unknown = null;
      try {
        json = JSON.parse(UTF8.decode(p.answer));
      } catch {
        // Not JSON: the status says it.
      }
      ex.error = (specOfWire(p.request.wire)?.errorOf ?? errorOf)(
        json,
        p.status,
      );
      return ex;
    }
    const norm = readPendingAnswer(p);
    if (norm) ex.response = norm;
    else {
      ex.error = {
        type: "unreadable",
        message: "the answer is not the API's answer shape",
      };
    }
    return ex;
  }
  if (ok) {
    ex.response = readPendingAnswer(p);
    if (!p.complete) ex.incomplete = true;
  }
  if (p.stream?.stopped) {
    ex.error = { type: "not_kept", message: p.stream.stopped };
  } else if (p.failure || !ok) {
    ex.error = { type: "stream", message: p.failure ?? `status ${p.status}` };
  }
  return ex;
}
