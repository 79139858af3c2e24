/**
 * The team store's database: a PostgreSQL connection (the `postgres` npm
 * client, loaded only when a database is used, named at run time so no
 * entry's module graph holds it), and the schema, created and migrated by
 * the tool (`ingest.ts db migrate --db URL`).
 *
 * Tables (schema version in `harness_meta`):
 * - `stores (store_id, label, first_seen)`: every store that pushed;
 * - `captures (store_id, capture_id, head_sequence, head_hash, event_count,
 *   updated_at)`: the verified head of each capture's chain;
 * - `events (store_id, capture_id, sequence, event_id, episode_id, kind,
 *   timestamp, tool, prev_event_hash, event_hash, line, payload)`: one row
 *   per sealed event, keyed `(store_id, capture_id, sequence)`; `line` is
 *   the exact canonical spool line (what hashes verify), `payload` the
 *   payload as `jsonb` with large values resolved;
 * - `refusals (store_id, capture_id, sequence, kind, message, at)`: gaps
 *   and forks refused on arrival;
 * - `packages (package_id, store_id, name, version, digest, capture_ids,
 *   document)`.
 * Indexes serve capture, episode, kind and tool queries.
 *
 * @module
 */

/** The pinned client. */
export const POSTGRES_CLIENT = "npm:postgres@3.4.9";

/** The schema version this code writes. */
export const TEAM_SCHEMA_VERSION = "1";

/** A tagged-template SQL client (the `postgres` package's). */
// deno-lint-ignore no-explicit-any
export type Sql = any;

/** The database cannot be reached or used. */
export class TeamDbError extends Error {
  /**
   * Create a `TeamDbError`.
   *
   * @param message What went wrong and what to do.
   * @param options Cause.
   */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "TeamDbError";
  }
}

/**
 * Connect to a PostgreSQL URL.
 *
 * @param url `postgres://user@host:port/db`.
 * @param options Pool size.
 * @returns The client (call `end()` when done).
 */
export async function connectDb(
  url: string,
  options: { max?: number } = {},
): Promise<Sql> {
  if (!/^postgres(ql)?:\/\//.test(url)) {
    throw new TeamDbError(
      `--db takes a postgres:// URL, not ${JSON.stringify(url)}`,
    );
  }
  const name = POSTGRES_CLIENT;
  const mod = await import(name);
  return mod.default(url, {
    max: options.max ?? 4,
    onnotice: () => {},
    connect_timeout: 5,
    idle_timeout: 30,
  });
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS harness_meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE IF NOT EXISTS stores (
  store_id text PRIMARY KEY,
  label text,
  first_seen timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS captures (
  store_id text NOT NULL,
  capture_id text NOT NULL,
  head_sequence bigint NOT NULL,
  head_hash text NOT NULL,
  event_count bigint NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (store_id, capture_id)
);
CREATE TABLE IF NOT EXISTS events (
  store_id text NOT NULL,
  capture_id text NOT NULL,
  sequence bigint NOT NULL,
  event_id text NOT NULL,
  episode_id text NOT NULL,
  kind text NOT NULL,
  timestamp text NOT NULL,
  tool text,
  prev_event_hash text NOT NULL,
  event_hash text NOT NULL,
  line text NOT NULL,
  payload jsonb NOT NULL,
  PRIMARY KEY (store_id, capture_id, sequence)
);
CREATE INDEX IF NOT EXISTS events_episode ON events (store_id, capture_id, episode_id);
CREATE INDEX IF NOT EXISTS events_kind ON events (kind);
CREATE INDEX IF NOT EXISTS events_tool ON events (tool) WHERE tool IS NOT NULL;
CREATE TABLE IF NOT EXISTS refusals (
  store_id text NOT NULL,
  capture_id text NOT NULL,
  sequence bigint NOT NULL,
  kind text NOT NULL,
  message text NOT NULL,
  at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS packages (
  package_id text PRIMARY KEY,
  store_id text NOT NULL,
  name text NOT NULL,
  version text NOT NULL,
  digest text NOT NULL,
  capture_ids jsonb NOT NULL,
  document jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
`;

/**
 * Create or migrate the schema (idempotent).
 *
 * @param sql The client.
 * @returns The schema version now in force.
 * @throws {TeamDbError} When the database holds a newer schema.
 */
export async function migrate(sql: Sql): Promise<string> {
  await sql.unsafe(SCHEMA);
  const [row] = await sql`SELECT value FROM harness_meta WHERE key = 'schema'`;
  if (row && Number(row.value) > Number(TEAM_SCHEMA_VERSION)) {
    throw new TeamDbError(
      `The database holds team schema ${row.value}, newer than this harness (${TEAM_SCHEMA_VERSION}): upgrade harness`,
    );
  }
  await sql`INSERT INTO harness_meta VALUES ('schema', ${TEAM_SCHEMA_VERSION})
    ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`;
  return TEAM_SCHEMA_VERSION;
}
