/**
 * Long work in slices, so one request never holds the event loop: the
 * work is a generator that yields between its steps (a span decoded, a
 * span mapped); {@linkcode runSteps} runs it at once (a file import),
 * {@linkcode TimeSlicer.run} gives the event loop a turn whenever a slice
 * has used its time (the intake, beside every other route).
 *
 * The turn is a timer (`setTimeout(0)`, a macrotask): only that lets the
 * listener read sockets meanwhile. `setImmediate` and `MessageChannel`
 * callbacks run before I/O is polled again and starve it (measured: a
 * `/health` beside 5 ms slices waited 0.8 s with `setImmediate`, forever
 * with `MessageChannel`; 4 ms with a timer). Deno clamps nested timers to
 * 4 ms, so a slice is worth its cost only if it is not much shorter.
 *
 * @module
 */

/** Default time a slice may hold the event loop, in ms. */
export const DEFAULT_SLICE_MS = 5;

/**
 * Run stepped work to its end without pausing.
 *
 * @param steps The work.
 * @returns What it returns.
 */
export function runSteps<T>(steps: Generator<unknown, T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** Options of {@linkcode TimeSlicer}. */
export interface TimeSlicerOptions {
  /**
   * Most time between two turns of the event loop, in ms.
   * @default DEFAULT_SLICE_MS
   */
  sliceMs?: number;
  /** The clock, in ms. @default performance.now */
  now?: () => number;
}

/**
 * Cuts work into slices of at most `sliceMs` and gives the event loop a
 * turn between them. One per request (it holds when its slice began).
 *
 * @example Run stepped work in slices
 * ```ts
 * import { TimeSlicer } from "./bounded_steps.ts";
 * function* count(): Generator<void, number> {
 *   let n = 0;
 *   for (let i = 0; i < 1000; i++) {
 *     n += i;
 *     yield;
 *   }
 *   return n;
 * }
 * const n = await new TimeSlicer().run(count());
 * if (n !== 499500) throw new Error(String(n));
 * ```
 */
export class TimeSlicer {
  #sliceMs: number;
  #now: () => number;
  #start: number;
  #turns = 0;

  /**
   * Create a slicer; its first slice begins now.
   *
   * @param options Slice length and clock.
   */
  constructor(options: TimeSlicerOptions = {}) {
    this.#sliceMs = options.sliceMs ?? DEFAULT_SLICE_MS;
    this.#now = options.now ?? (() => performance.now());
    this.#start = this.#now();
  }

  /** Turns given to the event loop so far. */
  get turns(): number {
    return this.#turns;
  }

  /**
   * Give the event loop a turn if this slice has used its time.
   *
   * @returns When the work may go on.
   */
  pause(): Promise<void> | void {
    if (this.#now() - this.#start < this.#sliceMs) return;
    return this.#turn();
  }

  async #turn(): Promise<void> {
    this.#turns++;
    await new Promise((resolve) => setTimeout(resolve, 0));
    this.#start = this.#now();
  }

  /**
   * Run stepped work, pausing (see {@linkcode TimeSlicer.pause}) at its
   * steps.
   *
   * @param steps The work; each `yield` is a place it may pause.
   * @returns What it returns.
   */
  async run<T>(steps: Generator<unknown, T>): Promise<T> {
    for (;;) {
      const r = steps.next();
      if (r.done) return r.value;
      const wait = this.pause();
      if (wait) await wait;
    }
  }
}
