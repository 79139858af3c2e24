/**
 * The index's write buffer: event rows waiting to be inserted, and the
 * capture and episode aggregates they change, written together in one
 * transaction per flush.
 *
 * @module
 */
import type { DatabaseSync, StatementSync } from "node:sqlite";
import type { TraceEvent } from "../trace/event.ts";
import { GENESIS_HASH } from "../trace/hash.ts";
import type { CaptureRecord, EpisodeRecord } from "./index_records.ts";
import { episodeSelector, selectCapture } from "./_index_queries.ts";

/**
 * The reserved episode of a capture's own record (`CAPTURE_EPISODE` of
 * `lib/lineage/episodes.ts`, above this layer): not counted as an episode.
 */
const CAPTURE_RECORD = "_capture";

/**
 * Rows written per multi-row INSERT, largest first: a flush's rows go in
 * as few statements as these sizes allow (154 rows: 100, 20, 20, 5, 5,
 * 1, 1, 1, 1), each statement prepared once.
 */
const INSERT_SIZES = [100, 20, 5, 1];
/** Columns of `event_index`. */
const EVENT_COLUMNS = 9;

/** A capture's head after a flush moved it. */
export interface FlushedHead {
  /** The capture. */
  capture_id: string;
  /** Its last sequence. */
  sequence: number;
  /** That event's hash. */
  hash: string;
}

/** Buffered rows of one index database. */
export class IndexBuffer {
  readonly #db: DatabaseSync;
  /** Buffered event rows, flattened: EVENT_COLUMNS values per row. */
  #pending: (string | number | null)[] = [];
  #captures = new Map<string, CaptureRecord>();
  #episodes = new Map<string, EpisodeRecord>();
  /**
   * Episodes first met since the last flush, whose rows (if any) are not
   * read yet: their records hold the buffered events only.
   */
  #unread = new Map<string, EpisodeRecord>();
  #dirtyCaptures = new Set<string>();
  #dirtyEpisodes = new Set<string>();
  /** The event-row inserts, by {@linkcode INSERT_SIZES} (prepared when first used). */
  #inserts: (StatementSync | undefined)[] = [];
  #captureUpsert?: StatementSync;
  #episodeUpsert?: StatementSync;
  #selectEpisode?: ReturnType<typeof episodeSelector>;

  /**
   * Create an `IndexBuffer`.
   *
   * @param db The database the rows go to (and aggregates are loaded from).
   */
  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  /** Events buffered and not yet written. */
  get pendingCount(): number {
    return this.#pending.length / EVENT_COLUMNS;
  }

  /** Whether anything waits to be written. */
  get dirty(): boolean {
    return this.#dirtyCaptures.size > 0;
  }

  /**
   * Buffer one event's rows.
   *
   * @param ev The sealed event.
   * @param offset Byte offset of its spool line.
   * @param length Byte length of its spool line.
   */
  add(ev: TraceEvent, offset: number, length: number): void {
    this.#pending.push(
      ev.capture_id,
      ev.sequence,
      ev.episode_id,
      ev.kind,
      ev.event_id,
      ev.parent_event_id,
      ev.timestamp,
      offset,
      length,
    );
    const cap = this.#captureRow(ev.capture_id);
    cap.event_count++;
    cap.head_sequence = ev.sequence;
    cap.head_hash = ev.event_hash;
    cap.indexed_bytes = offset + length + 1;
    cap.first_timestamp ??= ev.timestamp;
    cap.last_timestamp = ev.timestamp;
    if (ev.kind === "annotation") noteCaptureAnnotation(cap, ev);
    this.#dirtyCaptures.add(ev.capture_id);
    const key = ev.capture_id + "\0" + ev.episode_id;
    let ep = this.#episodes.get(key);
    if (ep === undefined) {
      // Its row (if it has one) is read in the flush's transaction, where
      // a lookup costs a fraction of one on its own: until then the record
      // holds only the buffered events (most episodes met are new).
      ep = newEpisode(ev);
      this.#episodes.set(key, ep);
      this.#unread.set(key, ep);
    }
    ep.event_count++;
    ep.last_sequence = ev.sequence;
    ep.last_timestamp = ev.timestamp;
    if (ev.kind === "episode.started") ep.started = true;
    if (ev.kind === "episode.finished") ep.finished = true;
    this.#dirtyEpisodes.add(key);
  }

  #captureRow(id: string): CaptureRecord {
    let cap = this.#captures.get(id);
    if (cap === undefined) {
      cap = selectCapture(this.#db, id) ?? newCapture(id);
      this.#captures.set(id, cap);
    }
    return cap;
  }

  /**
   * Write buffered rows in one transaction.
   *
   * @returns The head of each capture the flush moved.
   */
  flush(): FlushedHead[] {
    const db = this.#db;
    db.exec("BEGIN");
    try {
      this.#readEpisodes();
      this.#insertEvents();
      this.#writeCaptures();
      this.#writeEpisodes();
      db.exec("COMMIT");
    } catch (err) {
      // SQLite rolls a transaction back by itself on some errors (a full
      // disk, SQLITE_FULL): an explicit ROLLBACK then fails with "no
      // transaction is active" and would hide the real cause. The rows stay
      // buffered for the next flush either way.
      if (db.isTransaction) {
        try {
          db.exec("ROLLBACK");
        } catch { /* the original error says more */ }
      }
      throw err;
    }
    const heads = [...this.#dirtyCaptures].map((id) => {
      const c = this.#captures.get(id)!;
      return {
        capture_id: id,
        sequence: c.head_sequence,
        hash: c.head_hash,
      };
    });
    this.#pending = [];
    this.#dirtyCaptures.clear();
    this.#dirtyEpisodes.clear();
    // Keep memory bounded: aggregates are reloaded from rows on demand.
    if (this.#episodes.size > 10_000) this.#episodes.clear();
    if (this.#captures.size > 1_000) this.#captures.clear();
    return heads;
  }

  /**
   * Merge the rows of the episodes first met since the last flush into
   * their records (the row's start, the buffered events after it), and
   * count the new ones in their captures. Once merged, a record is whole:
   * a flush that fails after this writes the same records when tried again.
   */
  #readEpisodes(): void {
    if (this.#unread.size === 0) return;
    this.#selectEpisode ??= episodeSelector(this.#db);
    for (const [key, ep] of this.#unread) {
      const row = this.#selectEpisode(ep.capture_id, ep.episode_id);
      // Merged once, whatever fails after.
      this.#unread.delete(key);
      if (row === undefined) {
        // The capture's own record (its start and finish) is not an episode.
        if (ep.episode_id !== CAPTURE_RECORD) {
          this.#captureRow(ep.capture_id).episode_count++;
        }
        continue;
      }
      ep.event_count += row.event_count;
      ep.first_sequence = row.first_sequence;
      ep.first_timestamp = row.first_timestamp;
      ep.started = ep.started || row.started;
      ep.finished = ep.finished || row.finished;
    }
  }

  /** The insert of `INSERT_SIZES[k]` event rows, prepared once. */
  #insertStatement(k: number): StatementSync {
    let stmt = this.#inserts[k];
    if (stmt === undefined) {
      const row = "(" + Array(EVENT_COLUMNS).fill("?").join(",") + ")";
      stmt = this.#db.prepare(
        `INSERT OR REPLACE INTO event_index VALUES ${
          Array(INSERT_SIZES[k]).fill(row).join(",")
        }`,
      );
      this.#inserts[k] = stmt;
    }
    return stmt;
  }

  /** Insert the pending event rows, as many per statement as fit. */
  #insertEvents(): void {
    const p = this.#pending;
    let i = 0;
    for (let k = 0; k < INSERT_SIZES.length; k++) {
      const n = INSERT_SIZES[k] * EVENT_COLUMNS;
      for (; i + n <= p.length; i += n) {
        this.#insertStatement(k).run(...p.slice(i, i + n));
      }
    }
  }

  #writeCaptures(): void {
    const capStmt = this.#captureUpsert ??= this.#db.prepare(
      `INSERT OR REPLACE INTO captures VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    for (const id of this.#dirtyCaptures) {
      const c = this.#captures.get(id)!;
      capStmt.run(
        c.capture_id,
        c.label,
        c.status,
        c.event_count,
        c.episode_count,
        c.head_sequence,
        c.head_hash,
        c.indexed_bytes,
        c.first_timestamp,
        c.last_timestamp,
        c.started_at,
        c.finished_at,
      );
    }
  }

  #writeEpisodes(): void {
    const epStmt = this.#episodeUpsert ??= this.#db.prepare(
      `INSERT OR REPLACE INTO episodes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    for (const key of this.#dirtyEpisodes) {
      const e = this.#episodes.get(key)!;
      epStmt.run(
        e.capture_id,
        e.episode_id,
        e.event_count,
        e.first_sequence,
        e.last_sequence,
        e.first_timestamp,
        e.last_timestamp,
        e.started ? 1 : 0,
        e.finished ? 1 : 0,
      );
    }
  }

  /**
   * Forget the aggregates kept in memory, of one capture or of all (after
   * their rows were deleted).
   *
   * @param captureId The capture, or undefined for all.
   */
  forget(captureId?: string): void {
    if (captureId === undefined) {
      this.#captures.clear();
      this.#episodes.clear();
      this.#unread.clear();
    } else {
      this.#captures.delete(captureId);
      for (const key of [...this.#episodes.keys()]) {
        if (key.startsWith(captureId + "\0")) {
          this.#episodes.delete(key);
          this.#unread.delete(key);
        }
      }
    }
  }
}

/** A capture's record before its first event. */
function newCapture(id: string): CaptureRecord {
  return {
    capture_id: id,
    label: null,
    status: "open",
    event_count: 0,
    episode_count: 0,
    head_sequence: 0,
    head_hash: GENESIS_HASH,
    indexed_bytes: 0,
    first_timestamp: null,
    last_timestamp: null,
    started_at: null,
    finished_at: null,
  };
}

/** An episode's record before its first event (this one). */
function newEpisode(ev: TraceEvent): EpisodeRecord {
  return {
    capture_id: ev.capture_id,
    episode_id: ev.episode_id,
    event_count: 0,
    first_sequence: ev.sequence,
    last_sequence: ev.sequence,
    first_timestamp: ev.timestamp,
    last_timestamp: ev.timestamp,
    started: false,
    finished: false,
  };
}

/** What `capture.started` (label) and `capture.finished` (status) say of a capture. */
function noteCaptureAnnotation(cap: CaptureRecord, ev: TraceEvent): void {
  const type = ev.payload.type;
  if (type === "capture.started") {
    cap.started_at ??= ev.timestamp;
    const label = ev.payload.label;
    if (typeof label === "string") cap.label = label;
  } else if (type === "capture.finished") {
    cap.status = "finished";
    cap.finished_at = ev.timestamp;
  }
}
