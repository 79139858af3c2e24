/**
 * Live OTLP export behind the acknowledgement (`serve --export-otlp URL`),
 * lossless: a background loop reads each capture's spool after a durable
 * cursor (`<root>/otlp_export.json`, per collector URL, its credentials
 * masked), turns the events into spans with an {@linkcode OtlpSpanBuilder}
 * per capture and sends them in requests of `batchSpans`. The cursor moves
 * only past events whose spans the collector accepted, so a collector that
 * is down, slow or refusing only delays the stream: the loop backs off
 * (doubling, capped) and resumes where it stopped, also after a server
 * restart (the builder is rebuilt by replaying from the oldest event still
 * open at the cursor). A span is sent at least once: its id is derived from
 * event ids and it carries `harness.event_id`, so a receiver drops repeats.
 * Memory is bounded whatever the backlog: spools are read a chunk at a time
 * and at most `batchSpans` spans wait to be sent (plus those one event
 * finishes at once: an episode's root and its calls left open).
 * `/health` shows the lag and says `ok: false` once events have waited
 * with no progress for `stallAfterMs`.
 *
 * An endpoint the cursor file has never named starts at each capture's
 * current head (`export otlp <id>` sends a capture's past).
 *
 * @module
 */
import type { HarnessStore } from "../store/store.ts";
import type { TraceEvent } from "../trace/event.ts";
import { otlpRequest } from "./export.ts";
import type { OtlpSpan } from "./otlp_types.ts";
import { OtlpSpanBuilder } from "./span_builder.ts";
import { type OtlpProtocol, sendOtlp } from "./send.ts";
import type {
  OtlpStreamerOptions,
  OtlpStreamStatus,
} from "./stream_options.ts";

import {
  type CursorFile,
  cursorPath,
  eventsAfter,
  readStreamCursors,
  type StreamCursor,
  writeStreamCursors,
} from "./_cursor.ts";
import { maskUrlCredentials } from "../trace/mask_url.ts";

interface Live {
  builder: OtlpSpanBuilder;
  /** The last sequence the builder took. */
  fed: number;
}

/** Streams a store's events to an OTLP collector in the background. */
export class OtlpStreamer {
  readonly #store: HarnessStore;
  readonly #endpoint: string;
  /** The endpoint as shown and as the cursor file names it: credentials masked. */
  readonly #shownEndpoint: string;
  readonly #o: Required<Omit<OtlpStreamerOptions, "headers" | "protocol">>;
  readonly #headers: Record<string, string>;
  readonly #protocol: OtlpProtocol;
  readonly #path: string;
  #cursors: Record<string, StreamCursor> = {};
  #dirty = false;
  readonly #live = new Map<string, Live>();
  #pending: { capture: string; spans: OtlpSpan[] } | null = null;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #idle = false;
  #woken = false;
  #running: Promise<void> | null = null;
  #stopped = false;
  #closing = false;
  readonly #stop = new AbortController();
  #backoff = 0;
  #lastOk = Date.now();
  readonly #status: OtlpStreamStatus;

  /**
   * Create a streamer (call {@linkcode OtlpStreamer.start}).
   *
   * @param store The store (writable: it keeps the cursor).
   * @param endpoint The collector's traces URL (`…/v1/traces`).
   * @param options Batch size, interval, backoff, stall threshold, headers.
   */
  constructor(
    store: HarnessStore,
    endpoint: string,
    options: OtlpStreamerOptions = {},
  ) {
    this.#store = store;
    this.#endpoint = endpoint;
    this.#shownEndpoint = maskUrlCredentials(endpoint);
    this.#o = {
      batchSpans: options.batchSpans ?? 100,
      intervalMs: options.intervalMs ?? 1000,
      maxValueChars: options.maxValueChars ?? 8192,
      backoffMs: options.backoffMs ?? 250,
      maxBackoffMs: options.maxBackoffMs ?? 10_000,
      stallAfterMs: options.stallAfterMs ?? 30_000,
      requestTimeoutMs: options.requestTimeoutMs ?? 10_000,
      maxOpen: options.maxOpen ?? 10_000,
      maxBuilders: options.maxBuilders ?? 64,
      eventsPerRound: options.eventsPerRound ?? 5000,
    };
    if (!(this.#o.batchSpans >= 1)) {
      throw new RangeError(
        `batchSpans must be at least 1, not ${this.#o.batchSpans}`,
      );
    }
    this.#headers = options.headers ?? {};
    this.#protocol = options.protocol ?? "http/json";
    this.#path = cursorPath(store);
    this.#status = {
      endpoint: this.#shownEndpoint,
      lag_events: 0,
      sent_spans: 0,
      retries: 0,
      last_error: null,
      last_success: null,
      stalled: false,
      buffered_spans: 0,
      peak_buffered_spans: 0,
      buffer_limit: this.#o.batchSpans,
    };
  }

  /** The export as it stands. */
  get status(): OtlpStreamStatus {
    let lag = 0;
    for (const c of this.#store.listCaptures()) {
      lag += Math.max(
        0,
        c.head_sequence - (this.#cursors[c.capture_id]?.sent ?? 0),
      );
    }
    if (lag === 0) this.#lastOk = Date.now();
    return {
      ...this.#status,
      last_error: this.#status.last_error === null
        ? null
        : maskUrlCredentials(this.#status.last_error),
      lag_events: lag,
      stalled: lag > 0 && Date.now() - this.#lastOk > this.#o.stallAfterMs,
      buffered_spans: this.#pending?.spans.length ?? 0,
    };
  }

  /**
   * Say an event was stored: a round runs soon (O(1), never throws). The
   * stream does not depend on it: an idle loop looks every `intervalMs`.
   */
  notify(): void {
    if (this.#stopped) return;
    this.#woken = true;
    if (this.#idle) {
      clearTimeout(this.#timer);
      this.#schedule(5);
    }
  }

  /** Where this collector's cursors are kept. */
  get #cursorFile(): CursorFile {
    return { path: this.#path, endpoint: this.#shownEndpoint };
  }

  /** Load the cursors and start the loop. */
  start(): void {
    const known = readStreamCursors(this.#cursorFile);
    if (known) {
      this.#cursors = known;
      // Rewritten at once: a file from before masking loses its passwords.
      writeStreamCursors(this.#cursorFile, this.#cursors);
    } else {
      // A new collector gets what is stored from now on.
      this.#store.flush();
      for (const c of this.#store.listCaptures()) {
        this.#cursors[c.capture_id] = {
          sent: c.head_sequence,
          replay_from: c.head_sequence + 1,
        };
      }
      writeStreamCursors(this.#cursorFile, this.#cursors);
    }
    this.#schedule(0);
  }

  #schedule(ms: number, idle = false): void {
    if (this.#stopped) return;
    this.#idle = idle;
    this.#timer = setTimeout(() => {
      this.#idle = false;
      this.#running = this.#tick().finally(() => this.#running = null);
    }, ms);
  }

  async #tick(): Promise<void> {
    this.#woken = false;
    let next: number;
    let idle = false;
    try {
      const more = await this.#round();
      this.#backoff = 0;
      this.#lastOk = Date.now();
      this.#status.last_error = null;
      this.#status.last_success = new Date().toISOString();
      idle = !more && !this.#woken;
      next = idle ? this.#o.intervalMs : 0;
    } catch (err) {
      this.#status.last_error = (err as Error).message;
      this.#status.retries++;
      this.#backoff = Math.min(
        this.#o.maxBackoffMs,
        Math.max(this.#o.backoffMs, this.#backoff * 2),
      );
      next = this.#backoff;
    }
    this.#saveCursors();
    this.#schedule(next, idle);
  }

  #saveCursors(): void {
    if (!this.#dirty) return;
    try {
      writeStreamCursors(this.#cursorFile, this.#cursors);
      this.#dirty = false;
    } catch (err) {
      this.#status.last_error =
        `Cannot write the export cursor ${this.#path}: ${
          (err as Error).message
        }`;
    }
  }

  /**
   * One round: what waits is sent first, then each capture's events after
   * its cursor (at most `eventsPerRound` each).
   *
   * @returns Whether events are left for another round.
   * @throws {OtlpSendError} When a request fails (the spans stay waiting).
   */
  async #round(): Promise<boolean> {
    await this.#drain();
    this.#store.flush();
    let more = false;
    for (const cap of this.#store.listCaptures()) {
      const id = cap.capture_id;
      if (cap.head_sequence <= (this.#cursors[id]?.sent ?? 0)) continue;
      const live = await this.#liveOf(id);
      let n = 0;
      for await (
        const raw of eventsAfter(this.#store, {
          captureId: id,
          after: live.fed,
        })
      ) {
        // Work in slices, so acknowledgements are never held up behind it.
        if (++n % 64 === 0) await new Promise((r) => setTimeout(r, 0));
        const spans = live.builder.add(this.#resolve(raw));
        live.fed = raw.sequence;
        if (spans.length) this.#hold(id, spans);
        if ((this.#pending?.spans.length ?? 0) >= this.#o.batchSpans) {
          await this.#drain();
        }
        if (!this.#pending) this.#advance(id, live);
        if (n >= this.#o.eventsPerRound) break;
      }
      await this.#drain();
      this.#advance(id, live);
      if (live.fed < cap.head_sequence) more = true;
      if (this.#stopped && !this.#closing) return true;
    }
    return more;
  }

  #hold(capture: string, spans: OtlpSpan[]): void {
    this.#pending ??= { capture, spans: [] };
    this.#pending.spans.push(...spans);
    this.#status.peak_buffered_spans = Math.max(
      this.#status.peak_buffered_spans,
      this.#pending.spans.length,
    );
  }

  /** Move a capture's cursor to what its builder took (nothing waits). */
  #advance(id: string, live: Live): void {
    const cur = this.#cursors[id];
    if (cur?.sent === live.fed) return;
    this.#cursors[id] = {
      sent: live.fed,
      replay_from: live.builder.oldestOpenSequence() ?? live.fed + 1,
    };
    this.#dirty = true;
  }

  /** Send what waits, a request at a time; what fails stays waiting. */
  async #drain(): Promise<void> {
    const p = this.#pending;
    if (!p) return;
    while (p.spans.length) {
      const batch = p.spans.slice(0, this.#o.batchSpans);
      await this.#post(p.capture, batch);
      p.spans.splice(0, batch.length);
      this.#status.sent_spans += batch.length;
    }
    this.#pending = null;
    const live = this.#live.get(p.capture);
    if (live) this.#advance(p.capture, live);
  }

  async #post(capture: string, spans: OtlpSpan[]): Promise<void> {
    const ac = new AbortController();
    const ms = this.#o.requestTimeoutMs;
    const timer = setTimeout(
      () => ac.abort(new Error(`no answer within ${ms} ms`)),
      ms,
    );
    const onStop = () => ac.abort(new Error("the server is stopping"));
    this.#stop.signal.addEventListener("abort", onStop);
    try {
      await sendOtlp(this.#endpoint, otlpRequest(capture, spans), {
        headers: this.#headers,
        protocol: this.#protocol,
        batchSize: spans.length,
        maxRetries: 0,
        signal: ac.signal,
      });
    } finally {
      clearTimeout(timer);
      this.#stop.signal.removeEventListener("abort", onStop);
    }
  }

  #resolve(ev: TraceEvent): TraceEvent {
    try {
      return this.#store.resolve(ev);
    } catch {
      return ev; // A blob that cannot be read: export the reference.
    }
  }

  /**
   * A capture's builder, rebuilt when not in memory: replaying its events
   * from the oldest one open at the cursor up to the cursor, sending nothing.
   */
  async #liveOf(id: string): Promise<Live> {
    const have = this.#live.get(id);
    if (have) {
      this.#live.delete(id); // most recently used last
      this.#live.set(id, have);
      return have;
    }
    const cur = this.#cursors[id] ?? { sent: 0, replay_from: 1 };
    const builder = new OtlpSpanBuilder(id, {
      maxValueChars: this.#o.maxValueChars,
      maxOpenEpisodes: this.#o.maxOpen,
      maxOpenCalls: this.#o.maxOpen,
    });
    if (cur.replay_from <= cur.sent) {
      let n = 0;
      for await (
        const raw of eventsAfter(this.#store, {
          captureId: id,
          after: cur.replay_from - 1,
        })
      ) {
        if (raw.sequence > cur.sent) break;
        if (++n % 64 === 0) await new Promise((r) => setTimeout(r, 0));
        builder.add(this.#resolve(raw));
      }
    }
    const live = { builder, fed: cur.sent };
    this.#live.set(id, live);
    for (const [other, l] of this.#live) {
      if (this.#live.size <= this.#o.maxBuilders) break;
      if (other === id || this.#pending?.capture === other) continue;
      this.#advance(other, l);
      this.#live.delete(other);
    }
    return live;
  }

  /**
   * Stop: within about `graceMs`, send what is stored and not yet sent,
   * then the spans still open (episode roots, calls with no completion as
   * `harness.incomplete`) as they stand; the cursor keeps them open, so
   * after a restart they are sent again when they finish. A collector that
   * does not answer in time only leaves the cursor where it is.
   *
   * @param graceMs Milliseconds the stop may take. @default 3000
   * @returns When the last request was answered or cut.
   */
  async close(graceMs = 3000): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    clearTimeout(this.#timer);
    const cut = setTimeout(() => this.#stop.abort(), graceMs);
    try {
      await this.#running;
      this.#closing = true;
      if (!this.#stop.signal.aborted) {
        while (await this.#round()) {
          if (this.#stop.signal.aborted) break;
        }
        for (const [id, live] of this.#live) {
          const spans = live.builder.finish();
          for (let i = 0; i < spans.length; i += this.#o.batchSpans) {
            const batch = spans.slice(i, i + this.#o.batchSpans);
            await this.#post(id, batch);
            this.#status.sent_spans += batch.length;
          }
        }
      }
    } catch (err) {
      this.#status.last_error = (err as Error).message;
    } finally {
      clearTimeout(cut);
      this.#saveCursors();
    }
  }
}
