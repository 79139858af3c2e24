/**
 * What follows each append: the event's index row (buffered, flushed after a
 * delay or a number of rows), the head receipts a flush writes to
 * `heads.log`, and the observers told of every event.
 *
 * @module
 */
import type { TraceEvent } from "../trace/event.ts";
import { type HeadReceipt, ReceiptLog } from "./heads.ts";
import type { SqliteIndex } from "./index_db.ts";

/** Options of {@linkcode IndexFeed}. */
export interface IndexFeedOptions {
  /** A reader's store: flushing writes no receipts. */
  readOnly: boolean;
  /** Longest delay before buffered index rows are written. */
  flushMs: number;
  /** Buffered index rows that force a write. */
  flushRows: number;
  /** While held, an append arms no flush timer: the holder settles soon. */
  hold?: { readonly held: boolean };
}

/** Feeds appended events to the index, the heads log and the observers. */
export class IndexFeed {
  readonly #root: string;
  readonly #index: SqliteIndex | null;
  readonly #opts: IndexFeedOptions;
  readonly #observers = new Set<(ev: TraceEvent) => void>();
  #receipts: ReceiptLog | null = null;
  #unwritten: HeadReceipt[] = [];
  #flushError: string | null = null;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #stopped = false;

  /**
   * Create an `IndexFeed`.
   *
   * @param root The store root (for `heads.log`).
   * @param index The index, or null for a store opened without one.
   * @param options Mode and flush policy.
   */
  constructor(
    root: string,
    index: SqliteIndex | null,
    options: IndexFeedOptions,
  ) {
    this.#root = root;
    this.#index = index;
    this.#opts = options;
  }

  /**
   * Add a listener of appended events.
   *
   * @param listener Called with each appended event.
   * @returns A function that removes it.
   */
  observe(listener: (ev: TraceEvent) => void): () => void {
    this.#observers.add(listener);
    return () => this.#observers.delete(listener);
  }

  /**
   * One event was appended: buffer its row, tell the observers, and flush
   * now or later.
   *
   * @param ev The sealed event.
   * @param offset Byte offset of its spool line.
   * @param length Byte length of its spool line.
   */
  appended(ev: TraceEvent, offset: number, length: number): void {
    const index = this.#index!;
    index.add(ev, offset, length);
    if (this.#observers.size > 0) {
      for (const listener of this.#observers) {
        try {
          listener(ev);
        } catch {
          // An observer never breaks an append.
        }
      }
    }
    if (index.pendingCount >= this.#opts.flushRows) {
      this.flush();
    } else if (this.#timer === undefined && !this.#opts.hold?.held) {
      this.#timer = setTimeout(() => this.#flushLater(), this.#opts.flushMs);
    }
  }

  /**
   * A run of events was appended and then indexed from the spool (a
   * streamed import): write the capture's head receipt now and tell the
   * observers of the run's last event.
   *
   * @param last The run's last event.
   */
  ranAppended(last: TraceEvent): void {
    if (!this.#opts.readOnly) {
      this.#unwritten.push({
        capture_id: last.capture_id,
        sequence: last.sequence,
        hash: last.event_hash,
        at: new Date().toISOString(),
      });
      this.flush();
    }
    for (const listener of this.#observers) {
      try {
        listener(last);
      } catch {
        // An observer never breaks an append.
      }
    }
  }

  /**
   * A timer's index flush. A failure (out of file handles, a full disk) must
   * not escape into the event loop, where it would end the process: it is
   * kept for `/health` ({@linkcode IndexFeed.flushError}) and tried again a
   * second later; the rows stay buffered (the spool has the events).
   */
  #flushLater(): void {
    this.#timer = undefined;
    if (this.#stopped) return;
    this.#flushOrRetry(false);
  }

  /**
   * Flush now; a failure is kept for `/health` and the flush tried again a
   * second later (never thrown).
   *
   * @param now Sync the receipts on this thread.
   */
  #flushOrRetry(now: boolean): void {
    try {
      this.flushIndex(now);
      this.#flushError = null;
    } catch (err) {
      this.#flushError = err instanceof Error ? err.message : String(err);
      this.#timer = setTimeout(() => this.#flushLater(), 1000);
    }
  }

  /** Why the last background flush failed; null once one succeeds. */
  get flushError(): string | null {
    return this.#flushError;
  }

  /** Write buffered rows now (and cancel the timer). */
  flush(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.flushIndex();
  }

  /**
   * Flush the index now and sync the head receipts on this thread (a quiet
   * moment: the timer's flush and the background sync are done here, in
   * the same turn of the event loop). A failure is handled as the timer's
   * flush handles it, never thrown.
   */
  settle(): void {
    if (this.#stopped) return;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#flushOrRetry(true);
  }

  /**
   * Flush the index and write a head receipt for each capture it moved.
   *
   * @param now Sync the receipts before returning, not in the background.
   */
  flushIndex(now = false): void {
    const heads = this.#index?.flush() ?? [];
    if (this.#opts.readOnly) return;
    if (heads.length) {
      const at = new Date().toISOString();
      this.#unwritten.push(...heads.map((h) => ({ ...h, at })));
    }
    if (this.#unwritten.length === 0) return;
    // Written now, synced off the event loop (like the spools): after a
    // power loss a receipt may vouch for events the spool lost, which is
    // exactly what verify must then report. Receipts that could not be
    // written (the index already holds their rows) go with the next flush.
    this.#receipts ??= new ReceiptLog(this.#root);
    this.#receipts.append(this.#unwritten, now);
    this.#unwritten = [];
  }

  /** Stop the timer for good (the store is closing). */
  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
  }

  /** Sync and close the heads log. */
  close(): void {
    this.#receipts?.close();
  }
}
