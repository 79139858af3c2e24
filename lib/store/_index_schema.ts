/**
 * The tables of `harness.db` and their version. Every table but `packages`
 * and `meta` is derived from the spools: another version is dropped, and
 * the store's catch-up rebuilds it.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";

/** The tables, created when missing. */
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
export const INDEX_SCHEMA_VERSION = "4";

/**
 * Create the tables; derived tables of another schema version are dropped
 * (the store's catch-up then rebuilds them from the spools).
 *
 * @param db The open database (writable).
 */
export function migrateIndex(db: DatabaseSync): void {
  db.exec(
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
  );
  const row = db.prepare("SELECT value FROM meta WHERE key = 'schema'").get() as
    | { value: string }
    | undefined;
  if (row && row.value !== INDEX_SCHEMA_VERSION) {
    db.exec(
      "DROP TABLE IF EXISTS event_index; DROP TABLE IF EXISTS episodes; DROP TABLE IF EXISTS captures",
    );
  }
  db.exec(SCHEMA);
  db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema', ?)")
    .run(INDEX_SCHEMA_VERSION);
}
