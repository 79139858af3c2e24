/**
 * {@linkcode RecordQueue}: exchanges the model gateway answered, recorded
 * after their answers are on their way: each waits 10 ms, then they are
 * recorded in order, one step at a time (read: request, capture, answer;
 * its events built (`recorder.ts`) and redacted; written), the loop
 * yielding to requests after each slice of about a millisecond, so the
 * requests that follow are answered first and wait for at most one step
 * past it (not a whole exchange); when exchanges pile up the slices grow,
 * so recording does not fall behind. A recording that fails is
 * counted, never thrown.
 *
 * @module
 */
import type { UnsealedEvent } from "../trace/event.ts";
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

/**
 * Exchanges waiting past which a slice lasts longer (up to
 * {@linkcode CATCH_UP_SLICE_MS}): a yield costs a timer's turn (a
 * millisecond or more), so slices of one budget alone could fall behind a
 * steady stream of fast answers. (Half-millisecond slices were measured:
 * the c=1 p50 rose by 0.1–0.4 ms, the yields costing more than they saved.)
 */
const CATCH_UP_AFTER = 64;

/** The longest slice, when many exchanges wait. */
const CATCH_UP_SLICE_MS = 4;

/**
 * An exchange in the queue and how far its recording got: read (`ex`),
 * then its events built and redacted (`events`), then written.
 */
interface Entry {
  /** As answered, or read already (the package paths). */
  item: Pending | { ready: Exchange };
  /** The exchange, once read. */
  ex?: Exchange;
  /** Its events, once built and redacted. */
  events?: UnsealedEvent[];
}

/** The recording of answered exchanges. */
export class RecordQueue {
  readonly #ctx: ModelGatewayContext;
  readonly #book: ConversationBook;
  readonly #stats: ModelGatewayStats;
  readonly #max: number;
  readonly #queue: Entry[] = [];
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
    this.#queue.push({ item: { ready: ex } });
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
    this.#queue.push({ item: ex });
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
   * Record what waits, a slice at a time: after each slice the loop yields,
   * so requests that arrived meanwhile are answered before the rest is
   * recorded. A slice ends after the step that passes its budget: a step
   * is a part of one exchange's recording, so a request waits for at most
   * the budget and one step.
   */
  #drain(): void {
    const waiting = this.#queue.length;
    const budget = waiting > CATCH_UP_AFTER
      ? Math.min(CATCH_UP_SLICE_MS, RECORD_SLICE_MS * waiting / CATCH_UP_AFTER)
      : RECORD_SLICE_MS;
    const until = performance.now() + budget;
    try {
      while (this.#queue.length > 0) {
        this.#step(this.#queue[0]);
        if (performance.now() >= until) break;
      }
    } finally {
      this.#stats.queued = this.#queue.length;
      this.#stats.pending_calls = this.#book.sizes.pending_calls;
      if (this.#queue.length > 0) setTimeout(() => this.#drain(), 0);
      else this.#draining = false;
    }
  }

  /**
   * One step of the first exchange's recording: read it, or build and
   * redact its events, or write them (then it leaves the queue). Exchanges
   * are recorded whole and in the order answered: the next one's events are
   * built from the conversations as this one left them.
   */
  #step(e: Entry): void {
    try {
      if (e.ex === undefined) {
        const ex = "ready" in e.item ? e.item.ready : this.#read(e.item);
        if (ex === null) this.#queue.shift();
        else e.ex = ex;
        return;
      }
      if (e.events === undefined) {
        e.events = this.#ctx.redact(exchangeEvents(e.ex, { book: this.#book }));
        return;
      }
      this.#queue.shift();
      if (e.events.length > 0) {
        this.#ctx.store.sink(e.ex.capture_id).emitMany(e.events);
      }
      this.#stats.recorded++;
    } catch (err) {
      if (this.#queue[0] === e) this.#queue.shift();
      this.miss(`recording failed: ${(err as Error).message}`);
    }
  }

  /** Resolves once every exchange answered so far is recorded (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.#queue.length > 0 || this.#draining) {
      await new Promise((r) => setTimeout(r, 1));
    }
  }
}
