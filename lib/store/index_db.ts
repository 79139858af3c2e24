/**
 * The SQLite index `harness.db` (node:sqlite, WAL). Everything in the
 * `captures`, `episodes` and `event_index` tables is derived from the spools,
 * so the index can be deleted and rebuilt to the same rows. Rows are buffered
 * and written in one transaction per flush.
 *
 * @module
 */
import { DatabaseSync, type StatementSync } from "node:sqlite";
import type { TraceEvent } from "../trace/event.ts";
import { GENESIS_HASH } from "../trace/hash.ts";
import { narrow, PRIVATE_FILE_MODE, privateFile } from "./_private_files.ts";

/** A capture as the index knows it. */
export interface CaptureRecord {
  /** Capture id. */
  capture_id: string;
  /** Label given at `capture start`, or null. */
  label: string | null;
  /** `open`, or `finished` once a `capture.finished` annotation was recorded. */
  status: string;
  /** Events in the spool. */
  event_count: number;
  /** Episodes seen. */
  episode_count: number;
  /** Last sequence. */
  head_sequence: number;
  /** Hash of the last event. */
  head_hash: string;
  /** Spool bytes covered by the index. */
  indexed_bytes: number;
  /** Timestamp of the first event. */
  first_timestamp: string | null;
  /** Timestamp of the last event. */
  last_timestamp: string | null;
  /** When `capture.started` was recorded, or null. */
  started_at: string | null;
  /** When `capture.finished` was recorded, or null. */
  finished_at: string | null;
}

/** An episode as the index knows it. */
export interface EpisodeRecord {
  /** Capture id. */
  capture_id: string;
  /** Episode id. */
  episode_id: string;
  /** Events of the episode. */
  event_count: number;
  /** First sequence. */
  first_sequence: number;
  /** Last sequence. */
  last_sequence: number;
  /** Timestamp of its first event. */
  first_timestamp: string;
  /** Timestamp of its last event. */
  last_timestamp: string;
  /** Whether `episode.started` was seen. */
  started: boolean;
  /** Whether `episode.finished` was seen. */
  finished: boolean;
}

/** One row of `event_index` (the spool line holds the rest of the event). */
export interface EventIndexRow {
  /** Capture id. */
  capture_id: string;
  /** Sequence. */
  sequence: number;
  /** Episode id. */
  episode_id: string;
  /** Kind. */
  kind: string;
  /** Event id. */
  event_id: string;
  /** Parent event id. */
  parent_event_id: string | null;
  /** Timestamp. */
  timestamp: string;
  /** Byte offset of the line in the spool. */
  byte_offset: number;
  /** Byte length of the line, without newline. */
  byte_length: number;
}

/** Rows written per multi-row INSERT. */
const INSERT_BATCH = 100;
const EVENT_COLUMNS = 9;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS captures (
  capture_id TEXT PRIMARY KEY,
  label TEXT,
  status TEXT NOT NULL,
  event_count INTEGER NOT NULL,
  episode_count INTEGER NOT NULL,
  head_sequence INTEGER NOT NULL,
  head_hash TEXT NOT NULL,
  indexed_bytes INTEGER NOT NULL,
  first_timestamp TEXT,
  last_timestamp TEXT,
  started_at TEXT,
  finished_at TEXT
);
CREATE TABLE IF NOT EXISTS episodes (
  capture_id TEXT NOT NULL,
  episode_id TEXT NOT NULL,
  event_count INTEGER NOT NULL,
  first_sequence INTEGER NOT NULL,
  last_sequence INTEGER NOT NULL,
  first_timestamp TEXT NOT NULL,
  last_timestamp TEXT NOT NULL,
  started INTEGER NOT NULL,
  finished INTEGER NOT NULL,
  PRIMARY KEY (capture_id, episode_id)
);
CREATE TABLE IF NOT EXISTS event_index (
  capture_id TEXT NOT NULL,
  sequence INTEGER NOT NULL,
  episode_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  event_id TEXT NOT NULL,
  parent_event_id TEXT,
  timestamp TEXT NOT NULL,
  byte_offset INTEGER NOT NULL,
  byte_length INTEGER NOT NULL,
  PRIMARY KEY (capture_id, sequence)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS packages (
  package_id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  version TEXT NOT NULL,
  digest TEXT NOT NULL,
  path TEXT,
  created_at TEXT NOT NULL,
  capture_ids TEXT NOT NULL,
  summary TEXT NOT NULL
);
`;

/** Version of the derived tables; another version is dropped and rebuilt from the spools. */
export const INDEX_SCHEMA_VERSION = "3";

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
  /** Buffered event rows, flattened: EVENT_COLUMNS values per row. */
  #pending: (string | number | null)[] = [];
  #captures = new Map<string, CaptureRecord>();
  #episodes = new Map<string, EpisodeRecord>();
  #dirtyCaptures = new Set<string>();
  #dirtyEpisodes = new Set<string>();
  #insertMany?: StatementSync;
  #insertOne?: StatementSync;

  /**
   * Create a `SqliteIndex`.
   *
   * @param path Path of `harness.db`.
   * @param options Read-only mode.
   */
  constructor(path: string, options: SqliteIndexOptions = {}) {
    this.#readOnly = options.readOnly ?? false;
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
      this.#migrate();
    }
  }

  /**
   * Create the tables; derived tables of another schema version are
   * dropped (the store's catch-up then rebuilds them from the spools).
   */
  #migrate(): void {
    const db = this.#db;
    db.exec(
      "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    );
    const row = db.prepare("SELECT value FROM meta WHERE key = 'schema'")
      .get() as
        | { value: string }
        | undefined;
    if (row && row.value !== INDEX_SCHEMA_VERSION) {
      db.exec(
        "DROP TABLE IF EXISTS event_index; DROP TABLE IF EXISTS episodes; DROP TABLE IF EXISTS captures",
      );
    }
    db.exec(SCHEMA);
    db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema', ?)")
      .run(
        INDEX_SCHEMA_VERSION,
      );
  }

  /** Events buffered and not yet written. */
  get pendingCount(): number {
    return this.#pending.length / EVENT_COLUMNS;
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
    if (ev.kind === "annotation") {
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
    this.#dirtyCaptures.add(ev.capture_id);
    const key = ev.capture_id + "\0" + ev.episode_id;
    let ep = this.#episodes.get(key);
    if (ep === undefined) {
      ep = this.#loadEpisode(ev.capture_id, ev.episode_id) ?? {
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
      if (ep.event_count === 0) cap.episode_count++;
      this.#episodes.set(key, ep);
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
      cap = this.#loadCapture(id) ?? {
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
      this.#captures.set(id, cap);
    }
    return cap;
  }

  #loadCapture(id: string): CaptureRecord | undefined {
    const row = this.#db.prepare("SELECT * FROM captures WHERE capture_id = ?")
      .get(id) as CaptureRecord | undefined;
    return row ? { ...row } : undefined;
  }

  #loadEpisode(capId: string, epId: string): EpisodeRecord | undefined {
    const row = this.#db.prepare(
      "SELECT * FROM episodes WHERE capture_id = ? AND episode_id = ?",
    ).get(capId, epId) as Record<string, unknown> | undefined;
    return row ? toEpisode(row) : undefined;
  }

  /** Write buffered rows in one transaction. */
  flush(): { capture_id: string; sequence: number; hash: string }[] {
    if (this.#readOnly || this.#dirtyCaptures.size === 0) return [];
    const db = this.#db;
    const row = "(" + Array(EVENT_COLUMNS).fill("?").join(",") + ")";
    this.#insertMany ??= db.prepare(
      `INSERT OR REPLACE INTO event_index VALUES ${
        Array(INSERT_BATCH).fill(row).join(",")
      }`,
    );
    this.#insertOne ??= db.prepare(
      `INSERT OR REPLACE INTO event_index VALUES ${row}`,
    );
    const p = this.#pending;
    const many = INSERT_BATCH * EVENT_COLUMNS;
    db.exec("BEGIN");
    try {
      let i = 0;
      for (; i + many <= p.length; i += many) {
        this.#insertMany.run(...p.slice(i, i + many));
      }
      for (; i < p.length; i += EVENT_COLUMNS) {
        this.#insertOne.run(...p.slice(i, i + EVENT_COLUMNS));
      }
      const capStmt = db.prepare(
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
      const epStmt = db.prepare(
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
      db.exec("COMMIT");
    } catch (err) {
      db.exec("ROLLBACK");
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
    if (captureId === undefined) {
      this.#captures.clear();
      this.#episodes.clear();
    } else {
      this.#captures.delete(captureId);
      for (const key of [...this.#episodes.keys()]) {
        if (key.startsWith(captureId + "\0")) this.#episodes.delete(key);
      }
    }
  }

  /**
   * One capture.
   *
   * @param captureId Capture id.
   * @returns Its record, or undefined.
   */
  getCapture(captureId: string): CaptureRecord | undefined {
    this.flush();
    return this.#loadCapture(captureId);
  }

  /**
   * All captures, by id.
   *
   * @returns Capture records.
   */
  listCaptures(): CaptureRecord[] {
    this.flush();
    return (this.#db.prepare("SELECT * FROM captures ORDER BY capture_id")
      .all() as unknown as CaptureRecord[]).map((r) => ({ ...r }));
  }

  /**
   * Episodes of a capture, by first sequence.
   *
   * @param captureId Capture id.
   * @returns Episode records.
   */
  listEpisodes(captureId: string): EpisodeRecord[] {
    this.flush();
    return (this.#db.prepare(
      "SELECT * FROM episodes WHERE capture_id = ? ORDER BY first_sequence",
    ).all(captureId) as Record<string, unknown>[]).map(toEpisode);
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
    const rows = (episodeId === undefined
      ? this.#db.prepare(
        "SELECT kind, count(*) AS n FROM event_index WHERE capture_id = ? GROUP BY kind ORDER BY kind",
      ).all(captureId)
      : this.#db.prepare(
        "SELECT kind, count(*) AS n FROM event_index WHERE capture_id = ? AND episode_id = ? GROUP BY kind ORDER BY kind",
      ).all(captureId, episodeId)) as { kind: string; n: number }[];
    return Object.fromEntries(rows.map((r) => [r.kind, Number(r.n)]));
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
    const rows = episodeId === undefined
      ? this.#db.prepare(
        "SELECT * FROM event_index WHERE capture_id = ? ORDER BY sequence",
      ).all(captureId)
      : this.#db.prepare(
        "SELECT * FROM event_index WHERE capture_id = ? AND episode_id = ? ORDER BY sequence",
      ).all(captureId, episodeId);
    return (rows as unknown as EventIndexRow[]).map((r) => ({ ...r }));
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
      episodes: (this.#db.prepare(
        "SELECT * FROM episodes ORDER BY capture_id, episode_id",
      ).all() as Record<string, unknown>[]).map(toEpisode),
      event_index: (this.#db.prepare(
        "SELECT * FROM event_index ORDER BY capture_id, sequence",
      ).all() as unknown as EventIndexRow[]).map((r) => ({ ...r })),
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
    const row = this.#db.prepare(
      "SELECT sequence, byte_offset FROM event_index WHERE capture_id = ? AND sequence > ? ORDER BY sequence LIMIT 1",
    ).get(captureId, after) as
      | { sequence: number; byte_offset: number }
      | undefined;
    return row
      ? { sequence: row.sequence, byte_offset: row.byte_offset }
      : null;
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

function toEpisode(row: Record<string, unknown>): EpisodeRecord {
  return {
    capture_id: row.capture_id as string,
    episode_id: row.episode_id as string,
    event_count: Number(row.event_count),
    first_sequence: Number(row.first_sequence),
    last_sequence: Number(row.last_sequence),
    first_timestamp: row.first_timestamp as string,
    last_timestamp: row.last_timestamp as string,
    started: Boolean(row.started),
    finished: Boolean(row.finished),
  };
}
