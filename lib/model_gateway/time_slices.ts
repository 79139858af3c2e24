/**
 * {@linkcode TimeSlices}: long work on the server's one thread done in
 * slices, the loop yielding between them so requests that arrive meanwhile
 * are answered (`/health` among them) while one large request is read or
 * one large exchange recorded.
 *
 * @module
 */

/** Time slices of work, with a yield to the event loop between them. */
export class TimeSlices {
  #ms: number;
  #start: number;
  #until: number;

  /**
   * Create a `TimeSlices`; the first slice starts now.
   *
   * @param ms Milliseconds of work per slice.
   */
  constructor(ms: number) {
    this.#ms = ms;
    this.#start = performance.now();
    this.#until = this.#start + ms;
  }

  /**
   * Make slices `ms` long from now on, the one under way too.
   *
   * @param ms Milliseconds of work per slice.
   */
  resize(ms: number): void {
    if (ms === this.#ms) return;
    this.#ms = ms;
    this.#until = this.#start + ms;
  }

  /** Whether the slice is used up. */
  due(): boolean {
    return performance.now() >= this.#until;
  }

  /** Yield to the event loop, then start a new slice. */
  async pause(): Promise<void> {
    await new Promise((r) => setTimeout(r, 0));
    this.#start = performance.now();
    this.#until = this.#start + this.#ms;
  }

  /** Yield when the slice is used up. */
  async maybePause(): Promise<void> {
    if (this.due()) await this.pause();
  }
}
