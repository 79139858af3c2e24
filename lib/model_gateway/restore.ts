/**
 * The gateway's memory rebuilt from the spools of open captures after a
 * restart, by replaying what the gateway itself recorded, in order: each
 * `model.requested` moves its conversation's end on (its `conversation`:
 * the request it continues, how many of its messages that one held, the new
 * messages' hashes), each `model.responded` settles that end (answered, with
 * its text and call ids, or failed); the calls still waiting for their
 * results, the calls answered, the toolsets shown, and the episodes that
 * host hooks record.
 *
 * Linear in the spool: a request that extends its conversation adds its new
 * hashes to the conversation in place; only a branch (an edit in a named
 * episode) copies the prefix it shares, as the live gateway did. Only
 * events the gateway writes are read as the gateway's (`source.host`
 * `model_gateway`, one of its wires as `source.adapter`, well-formed
 * hashes); `POST /ingest` refuses events that claim that source.
 *
 * @module
 */
import type { HarnessStore } from "../store/store.ts";
import type { TraceEvent } from "../trace/event.ts";
import { canonicalJson } from "../trace/canonical_json.ts";
import { sha256Hex } from "../trace/hash.ts";
import type { ConversationBook } from "./conversation_book.ts";
import {
  answerKey,
  type ConversationEntry,
  pendingEnd,
} from "./conversation_entry.ts";
import { GATEWAY_SOURCE } from "./recorder.ts";
import { isObject } from "./wire_types.ts";
import { specOfWire, WIRE_SPECS } from "./wires/registry.ts";

/** The recorded wires (the registry's). */
const WIRES = new Set(WIRE_SPECS.map((s) => s.wire));
const HASH = /^[0-9a-f]{64}$/;

/**
 * Work between two turns of the event loop while restoring, in ms: as the
 * hooks' restore (`lib/ingest/resume.ts`, which says why 16).
 */
const RESTORE_SLICE_MS = 16;

function hashesOf(v: unknown): string[] | null {
  if (!Array.isArray(v)) return null;
  for (const h of v) if (typeof h !== "string" || !HASH.test(h)) return null;
  return v as string[];
}

/**
 * {@linkcode BookRestorer}: the book rebuilt from the spools of open
 * captures, then moved on by events recorded after the scan (the spill's
 * exchanges a stopped process left, recorded at start).
 */
export class BookRestorer {
  readonly #book: ConversationBook;
  /** Per capture: each conversation by the event id of its latest request. */
  readonly #tips = new Map<string, Map<string, ConversationEntry>>();
  readonly #seen = new Set<ConversationEntry>();

  /**
   * Create a `BookRestorer`.
   *
   * @param book The gateway's book, empty.
   */
  constructor(book: ConversationBook) {
    this.#book = book;
  }

  /**
   * Read the spools of open captures.
   *
   * @param store The store (read only here).
   * @param watch Request ids to look for (`model.requested` event ids).
   * @returns Those of `watch` found in the spools.
   */
  async scan(
    store: HarnessStore,
    watch: ReadonlySet<string> = new Set(),
  ): Promise<Set<string>> {
    const found = new Set<string>();
    let until = performance.now() + RESTORE_SLICE_MS;
    for (const cap of store.listCaptures()) {
      if (cap.status !== "open") continue;
      for await (const ev of store.readEvents(cap.capture_id)) {
        // The listener answers during the restore (issue 44): a turn of the
        // event loop (a timer) every RESTORE_SLICE_MS of work.
        if (performance.now() >= until) {
          await new Promise((r) => setTimeout(r, 0));
          until = performance.now() + RESTORE_SLICE_MS;
        }
        if (watch.size > 0 && watch.has(ev.event_id)) found.add(ev.event_id);
        this.feed(ev);
      }
    }
    return found;
  }

  /**
   * Take one event of a capture, in the capture's order.
   *
   * @param ev A sealed event.
   */
  feed(ev: TraceEvent): void {
    const book = this.#book;
    const host = ev.source?.host ?? "";
    if (host !== GATEWAY_SOURCE) {
      if (host.startsWith("host_")) {
        book.noteHookEpisode(ev.capture_id, ev.episode_id);
        book.episode(ev.capture_id, ev.episode_id);
      }
      return;
    }
    if (!WIRES.has(ev.source.adapter ?? "")) return;
    let tips = this.#tips.get(ev.capture_id);
    if (!tips) this.#tips.set(ev.capture_id, tips = new Map());
    replay(book, ev, tips, this.#seen);
  }

  /**
   * Settle what was restored: a request recorded without its answer (the
   * server stopped) failed, so the same request again is a retry.
   *
   * @returns Conversations restored.
   */
  finish(): number {
    let restored = 0;
    for (const c of this.#seen) {
      if (c.dropped) continue;
      if (c.end.state === "pending") c.end.state = "failed";
      restored++;
    }
    this.#tips.clear();
    this.#seen.clear();
    return restored;
  }
}

/**
 * Fill a book from the store.
 *
 * @param store The store (read only here).
 * @param book The gateway's book, empty.
 * @returns Conversations restored.
 */
export async function restoreBook(
  store: HarnessStore,
  book: ConversationBook,
): Promise<number> {
  const r = new BookRestorer(book);
  await r.scan(store);
  return r.finish();
}

function replay(
  book: ConversationBook,
  ev: TraceEvent,
  tips: Map<string, ConversationEntry>,
  seen: Set<ConversationEntry>,
): void {
  const cap = ev.capture_id;
  const ep = book.episode(cap, ev.episode_id).state;
  const callId = ev.payload.host_call_id;
  if (ev.kind === "tool.call.started" && typeof callId === "string") {
    const tool = isObject(ev.payload.tool) ? ev.payload.tool : {};
    book.openCall(cap, ev.episode_id, callId, {
      event_id: ev.event_id,
      name: typeof tool.host_name === "string" ? tool.host_name : "",
      arguments: isObject(ev.payload.arguments) ? ev.payload.arguments : {},
    });
  } else if (
    (ev.kind === "tool.call.completed" || ev.kind === "tool.call.failed") &&
    typeof callId === "string"
  ) {
    book.markAnswered(cap, ev.episode_id, callId);
  } else if (ev.kind === "toolset.exposed") {
    if (ep.toolsets.size < 64) {
      ep.toolsets.add(sha256Hex(canonicalJson(ev.payload.tools)));
    }
  } else if (ev.kind === "model.requested") {
    const conv = isObject(ev.payload.conversation)
      ? ev.payload.conversation
      : {};
    const fresh = hashesOf(conv.new_hashes);
    const known = conv.continues;
    if (
      fresh === null || typeof known !== "number" ||
      !Number.isInteger(known) || known < 0
    ) return;
    const prevId = typeof conv.previous === "string" ? conv.previous : null;
    const prev = prevId !== null ? tips.get(prevId) : undefined;
    let c: ConversationEntry;
    if (
      prev && !prev.dropped && typeof conv.previous_response_id === "string"
    ) {
      // Continued by previous_response_id: the input holds new items only.
      c = prev;
      c.chained = true;
      book.touch(c);
    } else if (
      prev && !prev.dropped && prev.episode_id === ev.episode_id &&
      known === prev.hashes.length
    ) {
      c = prev;
      book.append(c, fresh);
    } else if (known === 0 || (prev && !prev.dropped)) {
      const shared = prev && known > 0
        ? prev.hashes.slice(0, Math.min(known, prev.hashes.length))
        : [];
      c = book.add({
        capture_id: cap,
        episode_id: ev.episode_id,
        hashes: shared.concat(fresh),
        end: pendingEnd(null),
        recorded: { request_event_id: null, head: null, length: 0 },
      });
    } else return; // What it continues is not known: nothing to rebuild.
    if (prevId !== null && tips.get(prevId) === c) tips.delete(prevId);
    c.end = pendingEnd(null);
    c.latest = ev.event_id;
    c.recorded = {
      request_event_id: ev.event_id,
      head: typeof conv.head === "string" ? conv.head : null,
      length: c.hashes.length,
    };
    tips.set(ev.event_id, c);
    seen.add(c);
  } else if (ev.kind === "model.responded" && ev.parent_event_id) {
    const c = tips.get(ev.parent_event_id);
    if (!c) return;
    const p = ev.payload;
    const res = isObject(p.response) ? p.response : null;
    const ok = res !== null && typeof p.status === "number" &&
      p.status >= 200 && p.status < 300 && !p.error && !p.incomplete;
    c.end = ok
      ? {
        state: "answered",
        answer: answerKey(
          typeof res.text === "string" ? res.text : "",
          Array.isArray(res.tool_call_ids)
            ? res.tool_call_ids.filter((x): x is string =>
              typeof x === "string"
            )
            : [],
        ),
        read: null,
        owner: null,
      }
      : { state: "failed", answer: null, read: null, owner: null };
    if (
      res && typeof res.id === "string" &&
      specOfWire(ev.source.adapter ?? "")?.continues_by_id
    ) {
      book.rememberResponse(c, res.id);
    }
  }
}
