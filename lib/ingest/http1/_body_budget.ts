/**
 * {@linkcode BodyBudget}: the request body bytes one server holds in memory,
 * reserved while a body is read and given back once it is answered (or,
 * for a handler that did not answer in time, once the handler lets go).
 *
 * @module
 */
import { HttpProtocolError } from "./_request.ts";
import type { ConnectionStats } from "./_options.ts";

/** Body bytes one connection holds in the server's memory budget. */
export interface Holding {
  /** Bytes reserved for the request being read or answered. */
  bytes: number;
  /** The handler did not answer in time (its 503 gets no `Retry-After`). */
  late: boolean;
}

/** Options of {@linkcode BodyBudget}. */
export interface BodyBudgetOptions {
  /** Body bytes held in memory at most, over all connections. */
  maxBytes: number;
  /** The server's counters (`over_body_budget` counts refusals). */
  stats: ConnectionStats;
}

/** The memory budget of a server's request bodies. */
export class BodyBudget {
  /** Body bytes in memory now (reserved while read, until answered). */
  #buffered = 0;
  readonly #options: BodyBudgetOptions;

  /**
   * Create a `BodyBudget`.
   *
   * @param options The limit and the counters.
   */
  constructor(options: BodyBudgetOptions) {
    this.#options = options;
    Object.defineProperty(options.stats, "body_bytes_held", {
      enumerable: true,
      get: () => this.#buffered,
    });
  }

  /**
   * Reserve body bytes in the memory budget.
   *
   * @param held What the connection holds.
   * @param bytes Bytes to add.
   * @throws {HttpProtocolError} 503 when the budget is spent.
   */
  reserve(held: Holding, bytes: number): void {
    if (this.#buffered + bytes > this.#options.maxBytes) {
      this.#options.stats.over_body_budget++;
      throw new HttpProtocolError(
        503,
        `The ingest server holds ${this.#buffered} bytes of request bodies: retry shortly`,
      );
    }
    this.#buffered += bytes;
    held.bytes += bytes;
  }

  /**
   * Give back what a connection holds of the budget.
   *
   * @param held What the connection holds.
   */
  release(held: Holding): void {
    this.#buffered -= held.bytes;
    held.bytes = 0;
  }

  /**
   * Keep what a connection holds counted until a late handler ends (the
   * body stays in memory until the handler lets go of it); the connection
   * holds nothing from now on.
   *
   * @param held What the connection holds.
   * @param work The handler's answer.
   */
  releaseWhenDone(held: Holding, work: Promise<unknown>): void {
    const still = held.bytes;
    const release = () => {
      this.#buffered -= still;
    };
    held.bytes = 0;
    work.then(release, release);
  }
}
