/**
 * What the gateway and the proxy record into: a store's sink (sync, sealed
 * on the spot) or {@linkcode HttpTraceSink} (queued, posted to the ingest
 * server that owns the store).
 *
 * @module
 */
import type { UnsealedEvent } from "../trace/event.ts";

/** Anything events can be emitted to; the result is ignored. */
export interface EventSink {
  /**
   * Record one event.
   * @param event The unsealed event.
   */
  emit(event: UnsealedEvent): unknown;
}

/** Options of {@linkcode HttpTraceSink}. */
export interface HttpTraceSinkOptions {
  /**
   * Time-out of each POST in milliseconds.
   * @default 2000
   */
  timeoutMs?: number;
  /**
   * Events held while the server is slow; beyond it new events are dropped
   * and counted.
   * @default 10000
   */
  maxQueue?: number;
  /** Bearer token. */
  token?: string;
}

/**
 * Posts events to `POST /ingest` of a running ingest server, in order, in
 * batches, in the background: `emit` never blocks and never throws. Events
 * that cannot be delivered (queue full, server down after retries) are
 * counted in {@linkcode HttpTraceSink.dropped}.
 */
export class HttpTraceSink implements EventSink {
  readonly #url: string;
  readonly #timeoutMs: number;
  readonly #maxQueue: number;
  readonly #token?: string;
  #queue: UnsealedEvent[] = [];
  #running: Promise<void> | null = null;
  #dropped = 0;
  #sent = 0;
  #lastError: string | null = null;

  /**
   * Create a `HttpTraceSink`.
   *
   * @param baseUrl Ingest server base URL.
   * @param options Time-out, queue bound, token.
   */
  constructor(baseUrl: string, options: HttpTraceSinkOptions = {}) {
    this.#url = `${baseUrl.replace(/\/+$/, "")}/ingest`;
    this.#timeoutMs = options.timeoutMs ?? 2000;
    this.#maxQueue = options.maxQueue ?? 10_000;
    this.#token = options.token;
  }

  /** Events dropped (queue full or undeliverable). */
  get dropped(): number {
    return this.#dropped;
  }

  /** Why the last undelivered batch was not delivered (the server's answer, or the network error). */
  get lastError(): string | null {
    return this.#lastError;
  }

  /** Events the server acknowledged. */
  get sent(): number {
    return this.#sent;
  }

  /**
   * Queue one event for delivery.
   * @param event The unsealed event.
   */
  emit(event: UnsealedEvent): void {
    if (this.#queue.length >= this.#maxQueue) {
      this.#dropped++;
      return;
    }
    this.#queue.push(event);
    this.#running ??= this.#drain().finally(() => {
      this.#running = null;
    });
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      const batch = this.#queue.splice(0, 500);
      let delivered = false;
      for (let attempt = 0; attempt < 3 && !delivered; attempt++) {
        const ctl = new AbortController();
        const timer = setTimeout(() => ctl.abort(), this.#timeoutMs);
        try {
          const res = await fetch(this.#url, {
            method: "POST",
            headers: {
              "content-type": "application/json",
              ...(this.#token
                ? { authorization: `Bearer ${this.#token}` }
                : {}),
            },
            body: JSON.stringify(batch),
            signal: ctl.signal,
          });
          const answer = res.ok ? null : (await res.text()).slice(0, 2000);
          if (res.ok) await res.body?.cancel();
          // 4xx: the server refused the batch; retrying will not help.
          delivered = res.ok || (res.status >= 400 && res.status < 500);
          if (res.ok) this.#sent += batch.length;
          else {
            let why = answer ?? "";
            try {
              why = JSON.parse(why).error ?? why;
            } catch { /* not JSON */ }
            this.#lastError = `HTTP ${res.status}: ${why}`;
            if (delivered) this.#dropped += batch.length;
          }
        } catch (err) {
          this.#lastError = (err as Error).message;
          await new Promise((r) => setTimeout(r, 50 * (attempt + 1)));
        } finally {
          clearTimeout(timer);
        }
      }
      if (!delivered) this.#dropped += batch.length;
    }
  }

  /** Wait until everything queued was delivered or dropped. */
  async flush(): Promise<void> {
    while (this.#running) await this.#running;
  }
}
