/**
 * The team store's database: a PostgreSQL connection (the `postgres` npm
 * client, loaded only when a database is used, named at run time so no
 * entry's module graph holds it), and the schema, created and migrated by
 * the tool (`ingest.ts db migrate --db URL`). Credentials come from the
 * environment (`HARNESS_DB_URL`, `PG*`, `~/.pgpass`) so none need be on a
 * command line, and no message shows a password.
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

import { TeamDbError } from "./db_error.ts";
import { asTarget, type DbTarget, redactPassword } from "./db_target.ts";

/** Milliseconds a statement may take before the command gives up. */
export const DEFAULT_STATEMENT_TIMEOUT_MS = 8_000;

/** Seconds to reach the database and complete its start-up. */
export const DEFAULT_CONNECT_TIMEOUT_S = 5;

/** The description and deadline a client carries (see {@linkcode timely}). */
const META = Symbol("harness.team.db");

interface Meta {
  target: DbTarget;
  timeoutMs: number;
}

/**
 * Connect to the team database. The client reads nothing itself: every
 * part comes from the target. Connecting and its start-up must finish
 * within {@linkcode DEFAULT_CONNECT_TIMEOUT_S} seconds; every statement run
 * through {@linkcode timely} within `statementTimeoutMs`.
 *
 * @param to What `resolveDbTarget` (`db_target.ts`) gave, or a complete URL (read
 *   as is: nothing from the environment).
 * @param options Pool size and the statement time-out.
 * @returns The client (call `end()` when done).
 * @throws {TeamDbError} When this process may not reach the host.
 */
export async function connectDb(
  to: DbTarget | string,
  options: { max?: number; statementTimeoutMs?: number } = {},
): Promise<Sql> {
  const target = asTarget(to);
  const state = Deno.permissions.querySync({
    name: "net",
    host: `${target.host}:${target.port}`,
  }).state;
  if (state !== "granted") {
    throw new TeamDbError(
      `This process may not connect to the database at ${target.host}:${target.port}: name it in HARNESS_DB_URL or PGHOST/PGPORT (the deno tasks grant net to that host and port), or run deno with --allow-net=${target.host}:${target.port}`,
    );
  }
  const name = POSTGRES_CLIENT;
  const mod = await import(name);
  const ms = options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
  const sql = mod.default({
    host: target.host,
    port: target.port,
    user: target.user,
    database: target.database,
    password: target.password,
    ssl: target.sslmode === undefined || target.sslmode === "disable" ||
        target.sslmode === "allow"
      ? false
      : target.sslmode,
    max: options.max ?? 4,
    onnotice: () => {},
    // Its array-type lookup runs outside any query's promise: a database
    // that stops answering would make it an unhandled rejection.
    fetch_types: false,
    connect_timeout: DEFAULT_CONNECT_TIMEOUT_S,
    idle_timeout: 30,
    connection: {
      application_name: "harness",
      // The server gives up on a slow statement too (a stuck server is the
      // client's deadline's job).
      statement_timeout: String(ms),
    },
  });
  sql[META] = { target, timeoutMs: ms } satisfies Meta;
  return sql;
}

/**
 * Run a query against a deadline: past it the client's connections are
 * closed (nothing waits on a database that does not answer) and a
 * {@linkcode TeamDbError} says what to do. Errors from the database come
 * back with the password removed.
 *
 * @param sql A client from {@linkcode connectDb}.
 * @param query The query (or any promise using the client).
 * @param what What was being done, for the message.
 * @returns The query's result (rows, for a query).
 * @throws {TeamDbError} On time-out or failure.
 */
export async function timely(
  sql: Sql,
  query: PromiseLike<unknown>,
  what = "a statement",
): Promise<Sql> {
  const meta = sql[META] as Meta | undefined;
  const ms = meta?.timeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      sql.end({ timeout: 0 }).catch(() => {});
      reject(
        new TeamDbError(
          `The database at ${
            meta?.target.host ?? "?"
          }:${meta?.target.port} did not answer ${what} within ${
            ms / 1000
          } s: check that PostgreSQL is running and not blocked (locks, a full disk), then try again`,
        ),
      );
    }, ms);
  });
  try {
    return await Promise.race([Promise.resolve(query), late]);
  } catch (err) {
    throw dbError(err, meta?.target);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * An error from the client as a {@linkcode TeamDbError} that says what to
 * do, without the password.
 *
 * @param err What was thrown.
 * @param target The database, when known.
 * @returns The error to throw.
 */
export function dbError(err: unknown, target?: DbTarget): TeamDbError {
  if (err instanceof TeamDbError) return err;
  const e = err as { message?: string; code?: string };
  const where = target?.display ?? "the team database";
  let message = redactPassword(String(e?.message ?? err), target?.password);
  if (e?.code === "42P01") {
    message =
      `${where} has no harness schema (${message}): run "ingest.ts db migrate --db …" first`;
  } else if (e?.code === "CONNECT_TIMEOUT") {
    message =
      `${where} did not complete a connection within ${DEFAULT_CONNECT_TIMEOUT_S} s: check the host, port and firewall`;
  } else if (e?.code === "ECONNREFUSED" || /refused/i.test(message)) {
    message =
      `${where} refused the connection (${message}): is PostgreSQL running on that host and port?`;
  } else if (e?.code === "28P01" || e?.code === "28000") {
    message =
      `${where} refused the login (${message}): set PGPASSWORD or ~/.pgpass, or check the user`;
  } else {
    message = `${where}: ${message}`;
  }
  return new TeamDbError(message, { cause: err });
}

/**
 * Check that the database holds a schema this harness can read.
 *
 * @param sql The client.
 * @returns The schema version.
 * @throws {TeamDbError} When it is not migrated, or newer than this code.
 */
export async function checkSchema(sql: Sql): Promise<string> {
  const meta = sql[META] as Meta | undefined;
  const where = meta?.target.display ?? "The team database";
  const [t] = await timely(
    sql,
    sql`SELECT to_regclass('harness_meta') AS meta, to_regclass('captures') AS caps`,
    "the schema check",
  );
  if (!t?.meta || !t?.caps) {
    throw new TeamDbError(
      `${where} has no harness schema yet: run "ingest.ts db migrate --db …" (or "deno task ingest db migrate --db env") first`,
    );
  }
  const [row] = await timely(
    sql,
    sql`SELECT value FROM harness_meta WHERE key = 'schema'`,
    "the schema check",
  );
  if (!row) {
    throw new TeamDbError(
      `${where} has no harness schema version: run "ingest.ts db migrate --db …" first`,
    );
  }
  if (Number(row.value) > Number(TEAM_SCHEMA_VERSION)) {
    throw new TeamDbError(
      `${where} holds team schema ${row.value}, newer than this harness (${TEAM_SCHEMA_VERSION}): upgrade harness`,
    );
  }
  return String(row.value);
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
  const [before] = await timely(
    sql,
    sql`SELECT to_regclass('harness_meta') AS meta`,
    "the schema check",
  );
  if (before?.meta) {
    const [row] = await timely(
      sql,
      sql`SELECT value FROM harness_meta WHERE key = 'schema'`,
      "the schema check",
    );
    if (row && Number(row.value) > Number(TEAM_SCHEMA_VERSION)) {
      throw new TeamDbError(
        `The database holds team schema ${row.value}, newer than this harness (${TEAM_SCHEMA_VERSION}): upgrade harness`,
      );
    }
  }
  await timely(sql, sql.unsafe(SCHEMA), "the migration");
  const [row] = await timely(
    sql,
    sql`SELECT value FROM harness_meta WHERE key = 'schema'`,
    "the migration",
  );
  if (row && Number(row.value) > Number(TEAM_SCHEMA_VERSION)) {
    throw new TeamDbError(
      `The database holds team schema ${row.value}, newer than this harness (${TEAM_SCHEMA_VERSION}): upgrade harness`,
    );
  }
  await timely(
    sql,
    sql`INSERT INTO harness_meta VALUES ('schema', ${TEAM_SCHEMA_VERSION})
    ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`,
    "the migration",
  );
  return TEAM_SCHEMA_VERSION;
}
