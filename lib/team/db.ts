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

/** What a command needs to connect: the resolved target, never printed whole. */
export interface DbTarget {
  /** Host name or address. */
  host: string;
  /** TCP port. */
  port: number;
  /** Role. */
  user: string;
  /** Database name. */
  database: string;
  /** Password ("" when none); never part of a message. */
  password: string;
  /** `sslmode` (`disable`, `prefer`, `require`, `verify-full`), when set. */
  sslmode?: string;
  /** `postgres://user@host:port/db`: what messages, /health and status show. */
  display: string;
}

/** Where {@linkcode resolveDbTarget} reads the environment and files. */
export interface DbEnvironment {
  /** A variable's value (undefined when unset or not permitted). */
  env: (name: string) => string | undefined;
  /** A file's text, or null when it cannot be read. @default Deno.readTextFileSync */
  readFile?: (path: string) => string | null;
}

/** Milliseconds a statement may take before the command gives up. */
export const DEFAULT_STATEMENT_TIMEOUT_MS = 8_000;

/** Seconds to reach the database and complete its start-up. */
export const DEFAULT_CONNECT_TIMEOUT_S = 5;

/**
 * A URL with its password replaced by `***`, wherever it appears in a text.
 *
 * @param text Any text (an error message, a command line).
 * @param password A password to hide even outside a URL.
 * @returns The text without the password.
 */
export function redactPassword(text: string, password?: string): string {
  let out = text.replace(
    /([a-z][a-z0-9+.-]*:\/\/[^:/@\s'"]*):[^@\s'"]*@/gi,
    "$1:***@",
  );
  if (password) out = out.split(password).join("***");
  return out;
}

function readText(path: string): string | null {
  try {
    return Deno.readTextFileSync(path);
  } catch {
    return null;
  }
}

/** The password `~/.pgpass` (or `PGPASSFILE`) gives a target, as libpq reads it. */
function passFilePassword(
  t: Omit<DbTarget, "password" | "display">,
  e: DbEnvironment,
): string {
  const home = e.env("HOME");
  const path = e.env("PGPASSFILE") ?? (home ? `${home}/.pgpass` : undefined);
  if (!path) return "";
  const text = (e.readFile ?? readText)(path);
  if (!text) return "";
  for (const raw of text.split(/\r?\n/)) {
    if (!raw.trim() || raw.trimStart().startsWith("#")) continue;
    const fields: string[] = [];
    let cur = "";
    for (let i = 0; i < raw.length; i++) {
      if (raw[i] === "\\" && i + 1 < raw.length) cur += raw[++i];
      else if (raw[i] === ":" && fields.length < 4) {
        fields.push(cur);
        cur = "";
      } else cur += raw[i];
    }
    fields.push(cur);
    if (fields.length !== 5) continue;
    const want = [t.host, String(t.port), t.database, t.user];
    if (want.every((w, i) => fields[i] === "*" || fields[i] === w)) {
      return fields[4];
    }
  }
  return "";
}

/**
 * Resolve what `--db`, `--to` and `--replicate` name. `env` means the URL
 * in `HARNESS_DB_URL`; a URL may leave out any part (`postgres://` alone is
 * fine): the host, port, user, database and password then come from
 * `PGHOST`, `PGPORT`, `PGUSER`, `PGDATABASE` and `PGPASSWORD`, and the
 * password from `~/.pgpass` (`PGPASSFILE`), as libpq does.
 *
 * @param spec The flag's value.
 * @param e Where the environment and files are read.
 * @returns The target.
 * @throws {TeamDbError} For an empty or malformed value (the password never
 *   in the message).
 */
export function resolveDbTarget(spec: string, e: DbEnvironment): DbTarget {
  let url = spec;
  if (spec === "env") {
    url = e.env("HARNESS_DB_URL") ?? "";
    if (!url) {
      throw new TeamDbError(
        'The database is named "env" but HARNESS_DB_URL is not set (or not readable): export HARNESS_DB_URL=postgres://user@host:port/db',
      );
    }
  }
  if (!url.trim()) {
    throw new TeamDbError(
      'The database URL is empty: give postgres://user@host:port/db, or "env" to use HARNESS_DB_URL',
    );
  }
  if (!/^postgres(ql)?:\/\//i.test(url)) {
    throw new TeamDbError(
      `The database takes a postgres:// URL or "env", not ${
        JSON.stringify(redactPassword(url))
      }`,
    );
  }
  // libpq allows an empty host (`postgres://`, `postgres://user@/db`):
  // parse with a placeholder and take the host from PGHOST.
  const rest = url.replace(/^postgres(ql)?:\/\//i, "");
  const authority = rest.split(/[/?]/, 1)[0];
  const noHost = authority.slice(authority.lastIndexOf("@") + 1) === "";
  const PLACEHOLDER = "pghost.invalid";
  let u: URL;
  try {
    u = new URL(
      `http://${authority}${noHost ? PLACEHOLDER : ""}${
        rest.slice(authority.length)
      }`,
    );
  } catch {
    throw new TeamDbError(
      `The database URL ${
        JSON.stringify(redactPassword(url))
      } is not a URL: write postgres://user@host:port/db (a password with special characters percent-encoded, or in PGPASSWORD or ~/.pgpass)`,
    );
  }
  const dec = (s: string) => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  };
  const host = (noHost ? "" : dec(u.hostname).replace(/^\[|\]$/g, "")) ||
    e.env("PGHOST") || "localhost";
  const port = Number(u.port || e.env("PGPORT") || 5432);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new TeamDbError(`The database port must be 1–65535, not "${port}"`);
  }
  const user = dec(u.username) || e.env("PGUSER") || e.env("USER") ||
    "postgres";
  const database = dec(u.pathname.slice(1)) || e.env("PGDATABASE") || user;
  const sslmode = u.searchParams.get("sslmode") ?? e.env("PGSSLMODE");
  const base = { host, port, user, database, ...(sslmode ? { sslmode } : {}) };
  const password = dec(u.password) || e.env("PGPASSWORD") ||
    passFilePassword(base, e);
  const h = host.includes(":") ? `[${host}]` : host;
  return {
    ...base,
    password,
    display: `postgres://${encodeURIComponent(user)}@${h}:${port}/${
      encodeURIComponent(database)
    }`,
  };
}

/**
 * A target from a target or a complete URL (nothing read from the
 * environment for the latter).
 *
 * @param to The target or URL.
 * @returns The target.
 */
export function asTarget(to: DbTarget | string): DbTarget {
  return typeof to === "string"
    ? resolveDbTarget(to, { env: () => undefined, readFile: () => null })
    : to;
}

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
 * @param to What {@linkcode resolveDbTarget} gave, or a complete URL (read
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
