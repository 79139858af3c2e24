/**
 * A request's body as `model.requested` records it
 * (`payload.request.body`), and the way back to the body as sent.
 *
 * Two parts of a body are not recorded again while its conversation's
 * earlier requests hold them:
 *
 * - **the history**: the first `messages_before` messages (`messages`, the
 *   Responses API's `input`, Gemini's `contents`) are those of the requests
 *   before it;
 * - **repeated fields**: a top-level field of at least
 *   {@linkcode REPEATED_FIELD_MIN_CHARS} characters of JSON that is the
 *   same as in the request `conversation.previous` names (an agent's tools
 *   and system prompt: Claude Code sends ~32 KB of tools and ~7.5 KB of
 *   system prompt with every request) is left out, and its name listed in
 *   `body_same_as_previous`. {@linkcode filledBody} puts them back.
 *
 * @module
 */
import { sha256Hex } from "../trace/hash.ts";
import type { TraceEvent } from "../trace/event.ts";
import { isBlobRef } from "../store/blob_refs.ts";

/**
 * New messages past which a request's body is recorded without its list of
 * messages (`request.body_messages_omitted`): each message is recorded as
 * its own events already.
 */
export const MAX_BODY_MESSAGES = 4096;

/**
 * Characters of JSON from which a top-level field the previous request of
 * the conversation had the same is left out of the record (shorter ones
 * cost less to record than to compare).
 */
export const REPEATED_FIELD_MIN_CHARS = 256;

/** What {@linkcode recordedBody} needs besides the body. */
export interface RecordedBodyOptions {
  /** Messages the conversation holds already (left out). */
  known: number;
  /** The body's message list (`messages`, `input`, `contents`), if the wire has one. */
  historyKey: string | undefined;
  /**
   * Digests of the long fields of the request `conversation.previous`
   * names, by field name (null: none known, every field is recorded).
   */
  previous: Readonly<Record<string, string>> | null;
  /** Leave no field out, and work out no digests (`wholeBodies`). @default false */
  whole?: boolean;
}

/** A body as recorded. */
export interface RecordedBody {
  /** The body to record. */
  body: unknown;
  /** Names of the fields left out (the previous request's, unchanged), sorted. */
  same: string[];
  /** Digests of this request's long fields (the next request compares with them). */
  fields: Record<string, string>;
}

/**
 * The body to record: without the history the conversation holds, and
 * without the long fields the previous request had the same.
 *
 * @param body The request body as parsed.
 * @param options What the conversation holds.
 * @returns The body to record, what it left out, and the digests to keep.
 */
export function recordedBody(
  body: unknown,
  options: RecordedBodyOptions,
): RecordedBody {
  const { known, historyKey, previous } = options;
  const whole = options.whole === true;
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return { body, same: [], fields: {} };
  }
  const b = body as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  const same: string[] = [];
  const fields: Record<string, string> = {};
  let changed = false;
  for (const key of Object.keys(b)) {
    const value = b[key];
    if (key === historyKey && Array.isArray(value)) {
      if (value.length - known > MAX_BODY_MESSAGES) {
        // Each message is recorded as its own events; a list this long is
        // not kept again as one value (sealing it held the loop for
        // seconds).
        changed = true;
        continue;
      }
      if (known > 0) {
        out[key] = value.slice(known);
        changed = true;
        continue;
      }
    } else if (
      !whole &&
      ((typeof value === "object" && value !== null) ||
        (typeof value === "string" &&
          value.length >= REPEATED_FIELD_MIN_CHARS))
    ) {
      // The plain JSON text: the same text is the same value (another key
      // order is another text, and then the field is recorded again).
      const text = JSON.stringify(value);
      if (text.length >= REPEATED_FIELD_MIN_CHARS) {
        const digest = sha256Hex(text);
        fields[key] = digest;
        if (previous !== null && previous[key] === digest) {
          same.push(key);
          changed = true;
          continue;
        }
      }
    }
    out[key] = value;
  }
  same.sort();
  return { body: changed ? out : body, same, fields };
}

/** A recorded body whose left-out fields cannot be found. */
export class RecordedBodyError extends Error {
  /**
   * Create a `RecordedBodyError`.
   *
   * @param message What is missing and what to do.
   */
  constructor(message: string) {
    super(message);
    this.name = "RecordedBodyError";
  }
}

/**
 * A recorded request's body with the fields it left out
 * (`body_same_as_previous`) put back from the requests before it in its
 * conversation (`conversation.previous`, followed as far as needed). The
 * history (`messages_before`) stays out: the earlier requests' messages,
 * and the answers between them, are their own events.
 *
 * @param requested A `model.requested` event.
 * @param lookup The event of an id: the capture's events as the store
 *   reads them (`readEvents`: blob references resolved).
 * @returns The body, every top-level field the request sent in it.
 * @throws {RecordedBodyError} When a request the chain names is not
 *   found, or the chain does not hold a field it left out.
 *
 * @example A field the previous request recorded
 * ```ts
 * import { filledBody } from "./recorded_body.ts";
 * import type { TraceEvent } from "../trace/event.ts";
import { isBlobRef } from "../store/blob_refs.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 * const first = {
 *   event_id: "evt_1",
 *   kind: "model.requested",
 *   payload: {
 *     request: { body: { tools: ["…"], messages: ["hi"] } },
 *     conversation: { previous: null },
 *   },
 * } as unknown as TraceEvent;
 * const second = {
 *   event_id: "evt_2",
 *   kind: "model.requested",
 *   payload: {
 *     request: { body: { messages: ["more"] }, body_same_as_previous: ["tools"] },
 *     conversation: { previous: "evt_1" },
 *   },
 * } as unknown as TraceEvent;
 * const byId = new Map([[first.event_id, first], [second.event_id, second]]);
 * deepStrictEqual(filledBody(second, (id) => byId.get(id)), {
 *   messages: ["more"],
 *   tools: ["…"],
 * });
 * ```
 */
export function filledBody(
  requested: TraceEvent,
  lookup: (eventId: string) => TraceEvent | undefined,
): unknown {
  if (requested.kind !== "model.requested") {
    throw new RecordedBodyError(
      `Cannot fill in the body of ${requested.event_id}: it is a ${requested.kind} event; pass a model.requested event`,
    );
  }
  const own = requestOf(requested);
  let missing = sameAsPrevious(own);
  if (missing.length === 0) return own.body;
  const out: Record<string, unknown> = {
    ...(own.body as Record<string, unknown>),
  };
  const seen = new Set([requested.event_id]);
  let at = requested;
  while (missing.length > 0) {
    const previous = (at.payload.conversation as { previous?: unknown } | null)
      ?.previous;
    const what = `Cannot fill in ${
      missing.join(", ")
    } of ${requested.event_id}`;
    if (typeof previous !== "string") {
      throw new RecordedBodyError(
        `${what}: ${at.event_id} names no request before it (conversation.previous); the record is damaged`,
      );
    }
    if (seen.has(previous)) {
      throw new RecordedBodyError(
        `${what}: the requests before it name each other in a loop at ${previous}; the record is damaged`,
      );
    }
    seen.add(previous);
    const prev = lookup(previous);
    if (prev === undefined) {
      throw new RecordedBodyError(
        `${what}: the request before ${at.event_id} (${previous}) is not among the events given; pass the whole capture's events`,
      );
    }
    if (prev.kind !== "model.requested") {
      throw new RecordedBodyError(
        `${what}: ${previous}, named as the request before ${at.event_id}, is a ${prev.kind} event; the record is damaged`,
      );
    }
    const p = requestOf(prev);
    if (isBlobRef(p.body)) {
      throw new RecordedBodyError(
        `${what}: the body of ${previous} is a blob reference; pass the events as the store reads them (readEvents resolves blob references)`,
      );
    }
    const body =
      (typeof p.body === "object" && p.body !== null ? p.body : {}) as Record<
        string,
        unknown
      >;
    const skipped = new Set(sameAsPrevious(p));
    const still: string[] = [];
    for (const key of missing) {
      if (skipped.has(key)) still.push(key);
      else if (key in body) out[key] = body[key];
      else {
        throw new RecordedBodyError(
          `${what}: ${previous} neither holds ${key} nor leaves it out as its own previous request's; the record is damaged`,
        );
      }
    }
    missing = still;
    at = prev;
  }
  return out;
}

function requestOf(
  ev: TraceEvent,
): { body?: unknown; body_same_as_previous?: unknown } {
  const r = ev.payload.request;
  return typeof r === "object" && r !== null ? r : {};
}

function sameAsPrevious(
  r: { body_same_as_previous?: unknown },
): string[] {
  const s = r.body_same_as_previous;
  return Array.isArray(s) ? s.filter((k) => typeof k === "string") : [];
}
