/**
 * {@linkcode RecordQueue}: exchanges the model gateway answered, recorded
 * after their answers are on their way: each waits 10 ms, then its answer
 * is read (the request was read, its capture and episode decided, when it
 * arrived: `gateway.ts`), turned into events (`recorder.ts`) and
 * written, in slices of about a millisecond, so the requests that follow are
 * answered first. A recording that fails is counted, never thrown.
 *
 * @module
 */
import type { ConversationBook } from "./conversation_book.ts";
import type { Identity } from "./episode_identity.ts";
import type { ModelGatewayContext, ModelGatewayStats } from "./options.ts";
import {
  type Exchange,
  exchangeEvents,
  type PackageOutcome,
} from "./recorder.ts";
import { SseParser } from "./sse.ts";
import type { NormRequest, NormResponse, WireReader } from "./wire_types.ts";
import { errorOf } from "./exchange_bytes.ts";

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
  /** A whole answer's bytes (null for a stream, or no answer). */
  answer: Uint8Array | null;
  /** A stream's pieces, as relayed. */
  chunks: Uint8Array[];
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
        JSON.parse(new TextDecoder().decode(p.answer)),
      );
    } catch {
      p.norm = null;
    }
    p.complete = p.norm !== null;
    return p.norm;
  }
  const acc = p.reader.streamReader();
  const parser = new SseParser((e, d) => acc.add(e, d));
  for (const c of p.chunks) parser.push(c);
  parser.end();
  const res = acc.result();
  if (partial) return res;
  p.norm = res;
  p.complete = acc.complete;
  return res;
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
   * Read a pending exchange's answer (the request was read when it
   * arrived).
   */
  #read(p: Pending): Exchange {
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
    if (p.answer) {
      if (!ok) {
        let json: unknown = null;
        try {
          json = JSON.parse(new TextDecoder().decode(p.answer));
        } catch {
          // Not JSON: the status says it.
        }
        ex.error = errorOf(json, p.status);
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
    if (p.failure || !ok) {
      ex.error = { type: "stream", message: p.failure ?? `status ${p.status}` };
    }
    return ex;
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
          const events = this.#ctx.redact(
            exchangeEvents(ex, { book: this.#book }),
          );
          // The end keeps the answer's key, not the exchange's bytes.
          const end = ex.identity.conversation.end;
          if (end.owner === ex.identity && end.read) {
            this.#book.answerOf(ex.identity.conversation);
          }
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
