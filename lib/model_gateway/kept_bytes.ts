/**
 * {@linkcode KeptBytes}: the gateway's budget of bytes kept for recording,
 * over everything at once: answers being read or relayed (a whole answer's
 * bytes, a stream's events as they are read) and exchanges waiting in
 * memory to be recorded. Each holder takes bytes before keeping them and
 * gives them back when it lets them go; a holder that cannot take them
 * keeps nothing more (its answer goes on unchanged, its recording is
 * degraded and counted; a waiting exchange goes to the spill on disk).
 *
 * @module
 */

/** A byte budget shared by everything the gateway keeps for recording. */
export class KeptBytes {
  readonly #max: number;
  #used = 0;
  #peak = 0;

  /**
   * Create a `KeptBytes`.
   *
   * @param max The most bytes kept at once.
   */
  constructor(max: number) {
    this.#max = max;
  }

  /**
   * Take bytes from the budget, when there are that many left.
   *
   * @param n Bytes.
   * @returns Whether they were taken.
   *
   * @example
   * ```ts
   * import { KeptBytes } from "./kept_bytes.ts";
   * import { equal } from "node:assert/strict";
   * const b = new KeptBytes(10);
   * equal(b.take(8), true);
   * equal(b.take(4), false);
   * b.give(8);
   * equal(b.used, 0);
   * ```
   */
  take(n: number): boolean {
    if (this.#used + n > this.#max) return false;
    this.#used += n;
    if (this.#used > this.#peak) this.#peak = this.#used;
    return true;
  }

  /**
   * Give bytes back.
   *
   * @param n Bytes taken before.
   */
  give(n: number): void {
    this.#used = Math.max(0, this.#used - n);
  }

  /** Bytes kept now. */
  get used(): number {
    return this.#used;
  }

  /** The most bytes kept at once so far. */
  get peak(): number {
    return this.#peak;
  }

  /** The budget. */
  get max(): number {
    return this.#max;
  }
}
