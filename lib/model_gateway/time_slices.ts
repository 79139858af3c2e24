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
  readonly #ms: number;
  #until: number;

  /**
   * Create a `TimeSlices`; the first slice starts now.
   *
   * @param ms Milliseconds of work per slice.
   */
  constructor(ms: number) {
    this.#ms = ms;
    this.#until = performance.now() + ms;
  }

  /** Whether the slice is used up. */
  due(): boolean {
    return performance.now() >= this.#until;
  }

  /** Yield to the event loop, then start a new slice. */
  async pause(): Promise<void> {
    await new Promise((r) => setTimeout(r, 0));
    this.#until = performance.now() + this.#ms;
  }

  /** Yield when the slice is used up. */
  async maybePause(): Promise<void> {
    if (this.due()) await this.pause();
  }
}
