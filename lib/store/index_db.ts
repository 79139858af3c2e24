/**
 * The SQLite index `harness.db` (node:sqlite, WAL). Everything in the
 * `captures`, `episodes` and `event_index` tables is derived from the spools,
 * so the index can be deleted and rebuilt to the same rows. Rows are buffered
 * and written in one transaction per flush.
 *
 * The tables are in `_index_schema.ts`, the write buffer in
 * `_index_buffer.ts`, the read queries in `_index_queries.ts` and the row
 * types in `index_records.ts`.
 *
 * @module
 */
import { DatabaseSync } from "node:sqlite";
import type { TraceEvent } from "../trace/event.ts";
import { narrow, PRIVATE_FILE_MODE, privateFile } from "./_private_files.ts";
import type {
  CaptureRecord,
  EpisodeRecord,
  EventIndexRow,
} from "./index_records.ts";
import { migrateIndex } from "./_index_schema.ts";
import { type FlushedHead, IndexBuffer } from "./_index_buffer.ts";
import { storeWriteError } from "./store_full.ts";
import { dirname } from "node:path";
import {
  countKinds,
  selectCapture,
  selectCaptures,
  selectEpisodes,
  selectEvents,
  selectOffsetAfter,
} from "./_index_queries.ts";

/** Options of {@linkcode SqliteIndex}. */
export interface SqliteIndexOptions {
  /**
   * Open without writing (a reader beside a live writer).
   * @default false
   */
  readOnly?: boolean;
}

/** The index database of one store. */
export class SqliteIndex {
  readonly #db: DatabaseSync;
  readonly #readOnly: boolean;
  readonly #buffer: IndexBuffer;
  readonly #root: string;
  #onFlush: ((err: unknown | null) => void) | null = null;

  /**
   * Create a `SqliteIndex`.
   *
   * @param path Path of `harness.db`.
   * @param options Read-only mode.
   */
  constructor(path: string, options: SqliteIndexOptions = {}) {
    this.#readOnly = options.readOnly ?? false;
    this.#root = dirname(path);
    const onDisk = !this.#readOnly && path !== ":memory:";
    // Owner-only before SQLite opens it: its WAL and SHM files copy the mode.
    if (onDisk) privateFile(path);
    this.#db = new DatabaseSync(path, { readOnly: this.#readOnly });
    this.#db.exec("PRAGMA busy_timeout = 5000");
    if (!this.#readOnly) {
      this.#db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL");
      if (onDisk) {
        for (const s of ["-wal", "-shm"]) narrow(path + s, PRIVATE_FILE_MODE);
      }
      migrateIndex(this.#db);
    }
    this.#buffer = new IndexBuffer(this.#db);
  }

  /** Events buffered and not yet written. */
  get pendingCount(): number {
    return this.#buffer.pendingCount;
  }

  /**
   * Buffer one event's rows.
   *
   * @param ev The sealed event.
   * @param offset Byte offset of its spool line.
   * @param length Byte length of its spool line.
   */
  add(ev: TraceEvent, offset: number, length: number): void {
    this.#buffer.add(ev, offset, length);
  }

  /**
   * Write buffered rows in one transaction.
   *
   * @returns The head of each capture the flush moved.
   * @throws {StoreFullError} When the disk is full (the rows stay buffered).
   */
  flush(): { capture_id: string; sequence: number; hash: string }[] {
    if (this.#readOnly || !this.#buffer.dirty) return [];
    let heads: FlushedHead[];
    try {
      heads = this.#buffer.flush();
    } catch (err) {
      const thrown = storeWriteError(err, { root: this.#root, part: "index" });
      this.#onFlush?.(thrown);
      throw thrown;
    }
    this.#onFlush?.(null);
    return heads;
  }

  /**
   * Be told how each flush that writes rows ends (the store's write health).
   * One listener; a new one replaces the last.
   *
   * @param listener Called with null after a flush, or with what it threw.
   */
  watchFlushes(listener: (err: unknown | null) => void): void {
    this.#onFlush = listener;
  }

  /**
   * Drop every derived row of one capture, or of all (packages are kept).
   *
   * @param captureId The capture, or undefined for all.
   */
  reset(captureId?: string): void {
    this.flush();
    const where = captureId === undefined ? "" : " WHERE capture_id = ?";
    const args = captureId === undefined ? [] : [captureId];
    for (const table of ["event_index", "episodes", "captures"]) {
      this.#db.prepare(`DELETE FROM ${table}${where}`).run(...args);
    }
    this.#buffer.forget(captureId);
  }

  /**
   * One capture.
   *
   * @param captureId Capture id.
   * @returns Its record, or undefined.
   */
  getCapture(captureId: string): CaptureRecord | undefined {
    this.flush();
    return selectCapture(this.#db, captureId);
  }

  /**
   * All captures, by id.
   *
   * @returns Capture records.
   */
  listCaptures(): CaptureRecord[] {
    this.flush();
    return selectCaptures(this.#db);
  }

  /**
   * Episodes of a capture, by first sequence.
   *
   * @param captureId Capture id.
   * @returns Episode records.
   */
  listEpisodes(captureId: string): EpisodeRecord[] {
    this.flush();
    return selectEpisodes(this.#db, captureId);
  }

  /**
   * Event counts by kind.
   *
   * @param captureId Capture id.
   * @param episodeId Restrict to one episode.
   * @returns Kind → count, sorted by kind.
   */
  countsByKind(captureId: string, episodeId?: string): Record<string, number> {
    this.flush();
    return countKinds(this.#db, captureId, episodeId);
  }

  /**
   * Index rows of a capture in sequence order.
   *
   * @param captureId Capture id.
   * @param episodeId Restrict to one episode.
   * @returns The rows.
   */
  events(captureId: string, episodeId?: string): EventIndexRow[] {
    this.flush();
    return selectEvents(this.#db, captureId, episodeId);
  }

  /**
   * Every derived row, for comparing an index with its rebuild.
   *
   * @returns Rows of captures, episodes and event_index in key order.
   */
  dump(): {
    captures: CaptureRecord[];
    episodes: EpisodeRecord[];
    event_index: EventIndexRow[];
  } {
    this.flush();
    return {
      captures: this.listCaptures(),
      episodes: selectEpisodes(this.#db),
      event_index: selectEvents(this.#db),
    };
  }

  /**
   * Where the first event after a sequence starts in its spool.
   *
   * @param captureId Capture.
   * @param after Sequence.
   * @returns The byte offset and sequence, or null when there is none.
   */
  offsetAfter(
    captureId: string,
    after: number,
  ): { sequence: number; byte_offset: number } | null {
    this.flush();
    return selectOffsetAfter(this.#db, { captureId, after });
  }

  /**
   * Run a statement on the database (packages and other non-derived tables).
   *
   * @param sql SQL text.
   * @param params Positional parameters.
   * @returns The rows.
   */
  query(sql: string, ...params: (string | number | null)[]): Record<
    string,
    unknown
  >[] {
    this.flush();
    return (this.#db.prepare(sql).all(...params) as Record<string, unknown>[])
      .map((r) => ({ ...r }));
  }

  /**
   * Run a statement that writes.
   *
   * @param sql SQL text.
   * @param params Positional parameters.
   */
  execute(sql: string, ...params: (string | number | null)[]): void {
    this.flush();
    this.#db.prepare(sql).run(...params);
  }

  /** Flush and close. */
  close(): void {
    try {
      this.flush();
    } finally {
      this.#db.close();
    }
  }
}
