/**
 * An exchange as the spill keeps it (`record_spill.ts`): one line of JSON
 * holding everything its recording needs, whatever the process remembers —
 * the capture, what was decided when the request arrived (its episode, the
 * request it continues and the answer that one got, the messages its
 * conversation held already, a fork's link), the request body as sent and
 * the answer as read. The client's key is scrubbed from the line before it
 * is written; redaction runs when it is recorded, as for any exchange.
 *
 * The request's `model.requested` event id is given when the request
 * arrives (`request_event_id`), so a tape names the request it continues
 * by the id that request is (or will be) recorded under, and a tape found
 * after a restart is recorded once (not when its capture holds that id).
 *
 * @module
 */
import type { AnswerKey, ConversationEntry } from "./conversation_entry.ts";
import type { Identity } from "./episode_identity.ts";
import type { Exchange, PackageOutcome, RefusedAttempt } from "./recorder.ts";
import type { NormRequest, NormResponse, Wire } from "./wire_types.ts";
import { EXACT_SECRET_RULE, exactForms } from "../trace/scrub_exact.ts";

/** What was decided when the request arrived, as the tape keeps it. */
export interface IdentityTape {
  /** Its episode. */
  episode_id: string;
  /** Messages its conversation held already. */
  known: number;
  /** The same request again after a failure. */
  retry: boolean;
  /** Where a client-sent id came from, or null. */
  named: string | null;
  /** The answer the continued request got. */
  previous_answer: AnswerKey | null;
  /** The `model.requested` id of the request it continues, or null. */
  previous: string | null;
  /** A new episode's link. */
  forked_from: {
    episode_id: string;
    request_event_id: string | null;
    messages: number;
  } | null;
}

/** One spilled exchange. */
export interface ExchangeTape {
  /** Format version. */
  v: 1;
  /** The id its `model.requested` is recorded under. */
  request_event_id: string;
  /** The capture. */
  capture_id: string;
  /** The wire. */
  wire: Wire;
  /** What was decided when it arrived. */
  identity: IdentityTape;
  /** When the request arrived (ISO 8601). */
  started: string;
  /** Milliseconds until the answer was complete. */
  duration_ms: number;
  /** Upstream status. */
  status: number;
  /** The answer as read, or null. */
  response: NormResponse | null;
  /** What went wrong. */
  error?: { type: string; message: string } | null;
  /** The stream ended before its final event. */
  incomplete?: boolean;
  /** Answered by a package. */
  served_by?: string | null;
  /** Answers a package refused. */
  refused_attempts?: RefusedAttempt[];
  /** What the package did. */
  package?: PackageOutcome;
  /**
   * The request as read when it arrived (its messages' hashes are those of
   * the messages as sent, before the key was scrubbed from the line).
   */
  request: NormRequest;
  /** The request body as recorded (JSON). */
  body: unknown;
}

/**
 * What a tape keeps of an exchange's identity.
 *
 * @param id The identity decided on arrival.
 * @param previous The request id of the request it continues (at arrival).
 * @param forkedRequest The fork link's request id (at arrival).
 * @returns The tape's identity.
 */
export function identityTape(
  id: Identity,
  previous: string | null,
  forkedRequest: string | null,
): IdentityTape {
  return {
    episode_id: id.episode_id,
    known: id.known,
    retry: id.retry,
    named: id.named,
    previous_answer: id.previous_answer,
    previous,
    forked_from: id.forked_from
      ? {
        episode_id: id.forked_from.conversation.episode_id,
        request_event_id: forkedRequest,
        messages: id.forked_from.messages,
      }
      : null,
  };
}

/**
 * A tape's line: the exchange's JSON with the body as sent (its raw JSON
 * text when there is one, not parsed and written again), every key
 * replaced.
 *
 * @param tape The tape, its `body` left out.
 * @param body The body's JSON text as sent, or the body's value.
 * @param keys The client's keys (longest first).
 * @returns One line of JSON.
 */
export function tapeLine(
  tape: Omit<ExchangeTape, "body">,
  body: { text: string } | { value: unknown },
  keys: readonly string[],
): string {
  const head = JSON.stringify(tape);
  const raw = "text" in body ? body.text : JSON.stringify(body.value ?? null);
  // The body's text is JSON (it was parsed): spliced in as it came.
  let line = `${head.slice(0, -1)},"body":${raw.trim() || "null"}}`;
  const mark = `[REDACTED:${EXACT_SECRET_RULE}]`;
  // Each form a key takes in JSON text: as it is, escaped, URL-encoded.
  for (const form of exactForms(keys)) {
    if (line.includes(form)) line = line.split(form).join(mark);
  }
  return line;
}

/**
 * Read a tape's line.
 *
 * @param line The line.
 * @returns The tape, or null when it is not one.
 */
export function parseTape(line: string): ExchangeTape | null {
  try {
    const t = JSON.parse(line);
    if (
      t && t.v === 1 && typeof t.request_event_id === "string" &&
      typeof t.capture_id === "string" && typeof t.wire === "string" &&
      t.identity && typeof t.identity.episode_id === "string" &&
      t.request && Array.isArray(t.request.messages)
    ) return t as ExchangeTape;
  } catch {
    // Not a tape.
  }
  return null;
}

/**
 * A conversation that stands only for a request id (a tape recorded after
 * a restart: the recorder reads only `recorded.request_event_id` of it;
 * marked dropped, so the book never indexes it).
 */
function standIn(
  capture: string,
  episode: string,
  requestEventId: string | null,
): ConversationEntry {
  return {
    capture_id: capture,
    episode_id: episode,
    hashes: [],
    end: { state: "failed", answer: null, read: null, owner: null },
    recorded: { request_event_id: requestEventId, head: null, length: 0 },
    dropped: true,
  };
}

/**
 * The identity of a tape recorded without the process that spilled it:
 * the conversation it continues stands for the request it names.
 *
 * @param tape The tape.
 * @returns An identity the recorder can take.
 */
export function standInIdentity(tape: ExchangeTape): Identity {
  const t = tape.identity;
  const conv = standIn(tape.capture_id, t.episode_id, t.previous);
  return {
    conversation: conv,
    episode_id: t.episode_id,
    known: t.known,
    from: t.previous !== null ? conv : null,
    previous_answer: t.previous_answer,
    forked_from: t.forked_from
      ? {
        conversation: standIn(
          tape.capture_id,
          t.forked_from.episode_id,
          t.forked_from.request_event_id,
        ),
        messages: t.forked_from.messages,
      }
      : null,
    named: t.named,
    retry: t.retry,
  };
}

/**
 * The exchange a tape holds, given its identity.
 *
 * @param tape The tape.
 * @param identity Its identity (the live one, or a stand-in).
 * @returns The exchange.
 */
export function tapeExchange(tape: ExchangeTape, identity: Identity): Exchange {
  return {
    capture_id: tape.capture_id,
    identity,
    request: tape.request,
    body: tape.body,
    response: tape.response,
    status: tape.status,
    started: new Date(tape.started),
    duration_ms: tape.duration_ms,
    ...(tape.error ? { error: tape.error } : {}),
    ...(tape.incomplete ? { incomplete: true } : {}),
    ...(tape.served_by ? { served_by: tape.served_by } : {}),
    ...(tape.refused_attempts?.length
      ? { refused_attempts: tape.refused_attempts }
      : {}),
    ...(tape.package ? { package: tape.package } : {}),
  };
}
