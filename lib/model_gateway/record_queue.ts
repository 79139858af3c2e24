/**
 * {@linkcode RecordQueue}: exchanges the model gateway answered, recorded
 * after their answers are on their way: each waits 10 ms, then they are
 * read (request, capture, answer), turned into events (`recorder.ts`) and
 * written, in slices of about a millisecond, so the requests that follow are
 * answered first. A recording that fails is counted, never thrown.
 *
 * @module
 */
import { isValidId } from "../trace/ids.ts";
import type { ConversationBook } from "./conversation_book.ts";
import type { ModelGatewayContext, ModelGatewayStats } from "./options.ts";
import { type Exchange, exchangeEvents } from "./recorder.ts";
import { SseParser } from "./sse.ts";
import type { Wire, WireReader } from "./wire_types.ts";
import { errorOf } from "./exchange_bytes.ts";

/** An exchange answered, waiting to be read and recorded. */
export interface Pending {
  /** The wire's reader. */
  reader: WireReader;
  /** The wire. */
  wire: Wire;
  /** `x-harness-capture`, if sent. */
  capture: string | null;
  /** `x-harness-episode`, if sent. */
  episode: string | null;
  /** The request body as it came. */
  body: Uint8Array;
  /** When the request arrived. */
  started: Date;
  /** When the answer was complete (ms since the epoch). */
  finished?: number;
  /** The upstream's status. */
  status: number;
  /** A whole answer's bytes (null for a stream). */
  answer: Uint8Array | null;
  /** A stream's pieces, as relayed. */
  chunks: Uint8Array[];
  /** Why a stream ended early, or null. */
  failure: string | null;
}

/** Most bytes of a streamed answer kept for its record. */
export const MAX_KEPT_STREAM_BYTES = 32 * 1024 * 1024;

/**
 * How long answered exchanges wait to be recorded, together: recording is
 * work on the server's one thread, kept out of the way of requests that
 * follow at once (an agent's next request, others' requests).
 */
const RECORD_DELAY_MS = 10;

/** Milliseconds of recording before the loop yields to requests. */
const RECORD_SLICE_MS = 1;

/** The recording of answered exchanges. */
export class RecordQueue {
  readonly #ctx: ModelGatewayContext;
  readonly #book: ConversationBook;
  readonly #stats: ModelGatewayStats;
  readonly #max: number;
  readonly #queue: (Pending | { ready: Exchange })[] = [];
  /** The active capture as last read, and when (ms since the epoch). */
  #active: { id: string; at: number } | null = null;
  #draining = false;

  /**
   * Create a `RecordQueue`.
   *
   * @param ctx The store, capture choice and redaction.
   * @param options The gateway's memory, its counters, the most exchanges waiting.
   */
  constructor(
    ctx: ModelGatewayContext,
    options: { book: ConversationBook; stats: ModelGatewayStats; max: number },
  ) {
    this.#ctx = ctx;
    this.#book = options.book;
    this.#stats = options.stats;
    this.#max = options.max;
  }

  /**
   * Record an exchange read already (the package paths).
   *
   * @param ex The exchange.
   */
  ready(ex: Exchange): void {
    if (this.#queue.length >= this.#max) {
      this.miss(`the recording queue is full (${this.#max} exchanges)`);
      return;
    }
    this.#queue.push({ ready: ex });
    this.#wake();
  }

  /**
   * Read a pending exchange: request, capture, answer. Null (and a miss
   * counted) when the request cannot be read: it was forwarded all the
   * same.
   */
  #read(p: Pending): Exchange | null {
    let parsed: unknown;
    try {
      parsed = JSON.parse(new TextDecoder().decode(p.body));
    } catch (err) {
      this.miss(`unreadable request: ${(err as Error).message}`);
      return null;
    }
    const capture = p.capture || this.#activeCapture(p.finished ?? Date.now());
    if (!isValidId(capture)) {
      this.miss(
        `capture id ${
          JSON.stringify(String(capture).slice(0, 80))
        } is not valid`,
      );
      return null;
    }
    let request;
    try {
      request = p.reader.request(parsed);
    } catch (err) {
      this.miss(`not the API's request shape: ${(err as Error).message}`);
      return null;
    }
    const ex: Exchange = {
      capture_id: capture,
      episode_id: p.episode && isValidId(p.episode) ? p.episode : null,
      request,
      body: parsed,
      started: p.started,
      status: p.status,
      response: null,
      duration_ms: (p.finished ?? Date.now()) - p.started.getTime(),
    };
    const ok = p.status >= 200 && p.status < 300;
    if (p.answer) {
      let json: unknown = null;
      try {
        json = JSON.parse(new TextDecoder().decode(p.answer));
      } catch {
        // Not JSON: recorded as an error below.
      }
      if (!ok) ex.error = errorOf(json, p.status);
      else {
        try {
          ex.response = p.reader.response(json);
        } catch (err) {
          ex.error = { type: "unreadable", message: (err as Error).message };
        }
      }
      return ex;
    }
    const acc = p.reader.streamReader();
    const parser = new SseParser((e, d) => acc.add(e, d));
    for (const c of p.chunks) parser.push(c);
    parser.end();
    if (ok) {
      ex.response = acc.result();
      if (!acc.complete) ex.incomplete = true;
    }
    if (p.failure || !ok) {
      ex.error = { type: "stream", message: p.failure ?? `status ${p.status}` };
    }
    return ex;
  }

  /**
   * The capture an exchange without `x-harness-capture` goes to: the active
   * capture as read after the exchange's answer was complete. A reading
   * taken after that moment serves every exchange answered before it, so
   * the store root is looked at about once per drain, not per exchange
   * (a missing `active_capture` file costs an error object each time).
   *
   * @param finished When the exchange's answer was complete (ms since the epoch).
   */
  #activeCapture(finished: number): string {
    const last = this.#active;
    if (last !== null && last.at > finished) return last.id;
    const at = Date.now();
    const id = this.#ctx.defaultCapture();
    this.#active = { id, at };
    return id;
  }

  /**
   * Count an exchange not recorded, and why.
   *
   * @param reason Why (never a credential).
   */
  miss(reason: string): void {
    this.#stats.record_misses++;
    this.#stats.last_miss = reason.slice(0, 300);
  }

  /**
   * Record an exchange once read (after its answer).
   *
   * @param ex What was sent and answered.
   */
  enqueue(ex: Pending): void {
    ex.finished = Date.now();
    if (this.#queue.length >= this.#max) {
      this.miss(`the recording queue is full (${this.#max} exchanges)`);
      return;
    }
    this.#queue.push(ex);
    this.#wake();
  }

  #wake(): void {
    this.#stats.queued = this.#queue.length;
    if (!this.#draining) {
      this.#draining = true;
      // After the answer's bytes are handed to the connection, and the
      // requests that follow at once are on their way.
      setTimeout(() => this.#drain(), RECORD_DELAY_MS);
    }
  }

  /**
   * Record what waits, a slice at a time: after each slice of about a
   * millisecond the loop yields, so requests that arrived meanwhile are
   * answered before the rest is recorded.
   */
  #drain(): void {
    const until = performance.now() + RECORD_SLICE_MS;
    try {
      for (let p = this.#queue.shift(); p; p = this.#queue.shift()) {
        this.#stats.queued = this.#queue.length;
        try {
          const ex = "ready" in p ? p.ready : this.#read(p);
          if (ex === null) continue;
          const events = this.#ctx.redact(
            exchangeEvents(ex, { book: this.#book }),
          );
          if (events.length > 0) {
            this.#ctx.store.sink(ex.capture_id).emitMany(events);
          }
          this.#stats.recorded++;
        } catch (err) {
          this.miss(`recording failed: ${(err as Error).message}`);
        }
        if (performance.now() >= until) break;
      }
    } finally {
      this.#stats.queued = this.#queue.length;
      this.#stats.pending_calls = this.#book.sizes.pending_calls;
      if (this.#queue.length > 0) setTimeout(() => this.#drain(), 0);
      else this.#draining = false;
    }
  }

  /** Resolves once every exchange answered so far is recorded (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.#queue.length > 0 || this.#draining) {
      await new Promise((r) => setTimeout(r, 1));
    }
  }
}
