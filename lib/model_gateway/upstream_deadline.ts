/**
 * {@linkcode UpstreamDeadline}: the time an upstream exchange may take. Its
 * signal aborts (a `TimeoutError`, as `AbortSignal.timeout` gives) when the
 * time is up, and its timer goes as soon as the exchange ends:
 * `AbortSignal.timeout` kept a timer and its signals alive for the whole
 * time-out (10 minutes by default) after every request, thousands of them
 * under load, and the heap they filled is what the server's major GCs
 * collected.
 *
 * @module
 */

/** An upstream exchange's time limit. */
export class UpstreamDeadline {
  readonly #ctrl = new AbortController();
  #timer: number | undefined;

  /**
   * Start the clock.
   *
   * @param ms Milliseconds the exchange may take.
   */
  constructor(ms: number) {
    // A number in Deno (Node's types call it a Timeout object).
    this.#timer = Number(setTimeout(() => {
      this.#timer = undefined;
      this.#ctrl.abort(new DOMException("Signal timed out.", "TimeoutError"));
    }, ms));
    // Like `AbortSignal.timeout`: a pending limit keeps no process alive.
    Deno.unrefTimer(this.#timer);
  }

  /** Aborts when the time is up. */
  get signal(): AbortSignal {
    return this.#ctrl.signal;
  }

  /** The exchange ended (answered, failed or abandoned): its timer goes. */
  end(): void {
    if (this.#timer === undefined) return;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
