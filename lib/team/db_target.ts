/**
 * Where the team database is: a target resolved from a flag or `env`
 * (`HARNESS_DB_URL`), the standard `PG*` variables and a password file,
 * with the password kept out of every message.
 *
 * @module
 */
import { TeamDbError } from "./db_error.ts";
import { maskUrlCredentials } from "../trace/mask_url.ts";

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

/**
 * A URL with its password replaced by `***`, wherever it appears in a text,
 * whatever the URL's shape (see {@linkcode maskUrlCredentials}).
 *
 * @param text Any text (an error message, a command line).
 * @param password A password to hide even outside a URL.
 * @returns The text without the password.
 */
export function redactPassword(text: string, password?: string): string {
  let out = maskUrlCredentials(text);
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
