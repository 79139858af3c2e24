/**
 * Live OTLP export behind the acknowledgement (`serve --export-otlp URL`):
 * the ingest path only puts each stored event in a bounded queue (O(1),
 * never waits, never throws); a background loop turns queued events into
 * spans with an {@linkcode OtlpSpanBuilder} per capture and sends them in
 * batches. When the collector is slow or down the queue fills and new
 * events are dropped from the export (never from the store), counted in
 * {@linkcode OtlpStreamStatus.dropped_events}; a batch the collector
 * refuses after retries is counted in `failed_spans`. `capture`'s spool
 * keeps everything: `export otlp <id>` sends a whole capture again later.
 *
 * @module
 */
import type { TraceEvent } from "../trace/event.ts";
import { otlpRequest, type OtlpSpan, OtlpSpanBuilder } from "./export.ts";
import { type OtlpProtocol, sendOtlp } from "./send.ts";

/** What `/health` and `status` show of the live export. */
export interface OtlpStreamStatus {
  /** The collector. */
  endpoint: string;
  /** Events waiting in the queue. */
  queued: number;
  /** Events dropped because the queue was full. */
  dropped_events: number;
  /** Spans the collector accepted. */
  sent_spans: number;
  /** Spans given up on after retries. */
  failed_spans: number;
  /** Retries made. */
  retries: number;
  /** The last failure, or null once a batch went through after it. */
  last_error: string | null;
  /** When a batch last went through (ISO), or null. */
  last_success: string | null;
}

/** Options of an {@linkcode OtlpStreamer}. */
export interface OtlpStreamerOptions {
  /** Events held at most; more are dropped and counted. @default 2000 */
  maxQueue?: number;
  /** Spans per request (small: encoding one holds the event loop). @default 100 */
  batchSpans?: number;
  /** Milliseconds between rounds. @default 1000 */
  intervalMs?: number;
  /** Extra headers (API keys). */
  headers?: Record<string, string>;
  /** Body encoding. @default "http/json" */
  protocol?: OtlpProtocol;
  /** Longest argument or result value, in characters. @default 8192 */
  maxValueChars?: number;
  /** Retries per request before its spans count as failed. @default 3 */
  maxRetries?: number;
  /** First backoff in milliseconds. @default 200 */
  backoffMs?: number;
  /** Turn a stored event into what is exported (resolve blob references). */
  resolve?: (ev: TraceEvent) => TraceEvent;
  /** Open episodes and calls held per capture. @default 10000 */
  maxOpen?: number;
}

/** Streams stored events to an OTLP collector in the background. */
export class OtlpStreamer {
  readonly #endpoint: string;
  readonly #o: Required<
    Omit<OtlpStreamerOptions, "headers" | "resolve" | "protocol">
  >;
  readonly #headers: Record<string, string>;
  readonly #protocol: OtlpProtocol;
  readonly #resolve: (ev: TraceEvent) => TraceEvent;
  #queue: TraceEvent[] = [];
  readonly #builders = new Map<string, OtlpSpanBuilder>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  #round: Promise<void> | null = null;
  #closed = false;
  readonly #status: OtlpStreamStatus;

  /**
   * Create a streamer (call {@linkcode OtlpStreamer.start}).
   *
   * @param endpoint The collector's traces URL (`…/v1/traces`).
   * @param options Queue bound, batch size, interval, headers, encoding.
   */
  constructor(endpoint: string, options: OtlpStreamerOptions = {}) {
    this.#endpoint = endpoint;
    this.#o = {
      maxQueue: options.maxQueue ?? 2_000,
      batchSpans: options.batchSpans ?? 100,
      intervalMs: options.intervalMs ?? 1000,
      maxValueChars: options.maxValueChars ?? 8192,
      maxRetries: options.maxRetries ?? 3,
      backoffMs: options.backoffMs ?? 200,
      maxOpen: options.maxOpen ?? 10_000,
    };
    this.#headers = options.headers ?? {};
    this.#protocol = options.protocol ?? "http/json";
    this.#resolve = options.resolve ?? ((ev) => ev);
    this.#status = {
      endpoint,
      queued: 0,
      dropped_events: 0,
      sent_spans: 0,
      failed_spans: 0,
      retries: 0,
      last_error: null,
      last_success: null,
    };
  }

  /** The export as it stands. */
  get status(): OtlpStreamStatus {
    return { ...this.#status, queued: this.#queue.length };
  }

  /**
   * Queue one stored event; drops it (counted) when the queue is full.
   *
   * @param ev An event just appended to the store.
   */
  offer(ev: TraceEvent): void {
    if (this.#closed || this.#queue.length >= this.#o.maxQueue) {
      this.#status.dropped_events++;
      return;
    }
    this.#queue.push(ev);
  }

  /** Start the background loop. */
  start(): void {
    this.#schedule();
  }

  #schedule(): void {
    if (this.#closed) return;
    this.#timer = setTimeout(() => {
      this.#round = this.#flush(false).finally(() => {
        this.#round = null;
        this.#schedule();
      });
    }, this.#o.intervalMs);
  }

  /** Take what is queued, build spans, send them per capture. */
  async #flush(final: boolean): Promise<void> {
    const events = this.#queue;
    this.#queue = [];
    const spans = new Map<string, OtlpSpan[]>();
    const add = (capture: string, list: OtlpSpan[]) => {
      if (list.length === 0) return;
      const have = spans.get(capture);
      if (have) have.push(...list);
      else spans.set(capture, [...list]);
    };
    for (const [i, raw] of events.entries()) {
      // Work in slices, so acknowledgements are never held up behind it.
      if (i > 0 && i % 64 === 0) await new Promise((r) => setTimeout(r, 0));
      let builder = this.#builders.get(raw.capture_id);
      if (!builder) {
        builder = new OtlpSpanBuilder(raw.capture_id, {
          maxValueChars: this.#o.maxValueChars,
          maxOpenEpisodes: this.#o.maxOpen,
          maxOpenCalls: this.#o.maxOpen,
        });
        this.#builders.set(raw.capture_id, builder);
      }
      let ev: TraceEvent;
      try {
        ev = this.#resolve(raw);
      } catch {
        ev = raw; // A blob that cannot be read: export the reference.
      }
      add(raw.capture_id, builder.add(ev));
    }
    if (final) {
      for (const [capture, builder] of this.#builders) {
        add(capture, builder.finish());
      }
    }
    for (const [capture, list] of spans) {
      for (let i = 0; i < list.length; i += this.#o.batchSpans) {
        const batch = list.slice(i, i + this.#o.batchSpans);
        try {
          const r = await sendOtlp(
            this.#endpoint,
            otlpRequest(capture, batch),
            {
              headers: this.#headers,
              protocol: this.#protocol,
              batchSize: this.#o.batchSpans,
              maxRetries: this.#o.maxRetries,
              backoffMs: this.#o.backoffMs,
            },
          );
          this.#status.sent_spans += r.spans;
          this.#status.retries += r.retries;
          this.#status.last_error = null;
          this.#status.last_success = new Date().toISOString();
        } catch (err) {
          this.#status.failed_spans += batch.length;
          this.#status.last_error = (err as Error).message;
        }
      }
    }
  }

  /**
   * Stop: send what is queued and finish open spans (roots, incomplete
   * calls), then stop taking events.
   *
   * @returns When the last batch was sent or given up on.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#timer);
    await this.#round;
    await this.#flush(true);
  }
}
