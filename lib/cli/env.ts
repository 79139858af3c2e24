/**
 * Environment reads that respect narrow permissions: a variable the process
 * may not read is treated as unset instead of prompting or throwing.
 *
 * @module
 */
import { UsageError } from "./io.ts";

/**
 * A variable's value, when this process is allowed to read it.
 *
 * @param name Variable name.
 * @returns The value, or undefined when unset or not permitted.
 */
export function grantedEnv(name: string): string | undefined {
  try {
    const state =
      Deno.permissions.querySync({ name: "env", variable: name }).state;
    return state === "granted" ? Deno.env.get(name) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A database flag's value: an empty one is an error (never "the local
 * store"); absent, `db migrate` and `store push` use `HARNESS_DB_URL`.
 *
 * @param value The flag's value, if given.
 * @param flag The flag (`--db`, `--to`, `--replicate`), for the message.
 * @returns The value, `"env"` when absent and `HARNESS_DB_URL` is set, else undefined.
 * @throws {UsageError} For an empty value.
 */
export function dbSpec(
  value: string | undefined,
  flag: string,
): string | undefined {
  if (value === undefined) {
    return grantedEnv("HARNESS_DB_URL") ? "env" : undefined;
  }
  if (!value.trim()) {
    throw new UsageError(
      `${flag} is empty: give postgres://user@host:port/db, or "env" to use HARNESS_DB_URL`,
    );
  }
  return value;
}

/**
 * The database a `--db`, `--to` or `--replicate` value names, filled in
 * from `HARNESS_DB_URL`, the `PG*` variables and `~/.pgpass` as far as
 * this process may read them.
 *
 * @param spec The flag's value (`env`, or a postgres:// URL).
 * @param warn Where a warning goes (a password on the command line).
 * @returns The target.
 * @throws {TeamDbError} For an empty or malformed value.
 */
export async function dbTarget(
  spec: string,
  warn?: (text: string) => void,
): Promise<import("../team/db_target.ts").DbTarget> {
  const { resolveDbTarget } = await import("../team/db_target.ts");
  const target = resolveDbTarget(spec, { env: grantedEnv });
  if (warn && /^postgres(ql)?:\/\/[^/@]*:[^/@]*@/i.test(spec)) {
    warn(
      "harness: warning: the database password is on the command line (visible in ps and shell history); put it in PGPASSWORD or ~/.pgpass, or the whole URL in HARNESS_DB_URL and pass --db env",
    );
  }
  return target;
}
