/**
 * {@linkcode UpstreamDeadline}: what may end an upstream exchange early,
 * the time it may take and the client going away, as one signal. It aborts
 * with a `TimeoutError` (as `AbortSignal.timeout` does) when the time is
 * up, or with the client's reason when the client's signal aborts; once
 * the exchange ends, its timer and its listener on the client's signal go.
 *
 * Why not `AbortSignal.timeout` and `AbortSignal.any`: the first kept a
 * timer and its signals alive for the whole time-out (10 minutes by
 * default) after every request, and the second ties signals together with
 * weak references, which a scavenge keeps alive: every request's signals
 * (~0.7 KB) went to the old generation, for the major GCs to collect.
 *
 * @module
 */

/** An upstream exchange's time limit and its client, as one signal. */
export class UpstreamDeadline {
  readonly #ctrl = new AbortController();
  #timer: number | undefined;
  #client: AbortSignal | undefined;
  readonly #onClientAbort = (): void => {
    this.#ctrl.abort(this.#client?.reason);
  };

  /**
   * Start the clock.
   *
   * @param ms Milliseconds the exchange may take.
   * @param client The client's signal (aborts when the client goes away).
   */
  constructor(ms: number, client?: AbortSignal) {
    // A number in Deno (Node's types call it a Timeout object).
    this.#timer = Number(setTimeout(() => {
      this.#timer = undefined;
      this.#ctrl.abort(new DOMException("Signal timed out.", "TimeoutError"));
    }, ms));
    // Like `AbortSignal.timeout`: a pending limit keeps no process alive.
    Deno.unrefTimer(this.#timer);
    if (client?.aborted) this.#ctrl.abort(client.reason);
    else if (client) {
      this.#client = client;
      client.addEventListener("abort", this.#onClientAbort, { once: true });
    }
  }

  /** Aborts when the time is up or the client goes away. */
  get signal(): AbortSignal {
    return this.#ctrl.signal;
  }

  /** The exchange ended (answered, failed or abandoned): its timer and listener go. */
  end(): void {
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    if (this.#client) {
      this.#client.removeEventListener("abort", this.#onClientAbort);
      this.#client = undefined;
    }
  }
}
