/**
 * {@linkcode WriteHealth}: whether the store's writes succeed now. Each part
 * (spool appends, blob writes, index flushes) remembers its last failure
 * until one of its writes succeeds again, so a health check can say
 * `ok: false` with the reason while writes fail, and recovers by itself.
 *
 * @module
 */
import type { StorePart } from "./store_full.ts";

/** One failing part: why, since when, how many failures in a row. */
export interface StorePartFailure {
  /** The part. */
  part: StorePart;
  /** The last failure's message. */
  error: string;
  /** When the first failure of this run happened (ISO 8601). */
  since: string;
  /** Failures since the last success. */
  failures: number;
}

/** The store's part of a health report. */
export interface StoreHealth {
  /** False while any part's last write failed. */
  ok: boolean;
  /** The first failing part's message (absent when ok). */
  error?: string;
  /** Every failing part. */
  failing: StorePartFailure[];
  /** Write failures seen since the store opened. */
  write_failures: number;
}

/** The write state of one store. */
export class WriteHealth {
  readonly #failing = new Map<StorePart, StorePartFailure>();
  readonly #now: () => Date;
  #total = 0;

  /**
   * Create a `WriteHealth`.
   *
   * @param now The clock.
   */
  constructor(now: () => Date = () => new Date()) {
    this.#now = now;
  }

  /**
   * A write of a part failed.
   *
   * @param part The part.
   * @param err What it threw.
   */
  failed(part: StorePart, err: unknown): void {
    this.#total++;
    const error = err instanceof Error ? err.message : String(err);
    const was = this.#failing.get(part);
    this.#failing.set(part, {
      part,
      error,
      since: was?.since ?? this.#now().toISOString(),
      failures: (was?.failures ?? 0) + 1,
    });
  }

  /**
   * A write of a part succeeded: it is healthy again.
   *
   * @param part The part.
   */
  succeeded(part: StorePart): void {
    if (this.#failing.size > 0) this.#failing.delete(part);
  }

  /**
   * The report for a health check.
   *
   * @returns `ok`, and the failing parts with their reasons.
   */
  report(): StoreHealth {
    const failing = [...this.#failing.values()];
    return {
      ok: failing.length === 0,
      ...(failing.length ? { error: failing[0].error } : {}),
      failing,
      write_failures: this.#total,
    };
  }
}
