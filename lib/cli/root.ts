/**
 * Which store a command uses: `--root`, else `HARNESS_ROOT`, else
 * {@linkcode DEFAULT_ROOT} in the current directory; and where a path the
 * user typed points when `deno task` runs the entry in the checkout while
 * the user stands in another folder (`INIT_CWD`).
 *
 * @module
 */
import { isAbsolute, join, resolve } from "node:path";

/** The default store root, relative to the current directory. */
export const DEFAULT_ROOT = ".harness";

/**
 * Pick the store root.
 *
 * @param flag The `--root` value, if given.
 * @param env The `HARNESS_ROOT` value, if set.
 * @param base The folder a relative `--root` or `HARNESS_ROOT` is taken
 *   from (the user's folder, `INIT_CWD`, under `deno task`); the default
 *   root stays in the current directory.
 * @returns The root to use.
 */
export function resolveRoot(
  flag?: string,
  env?: string,
  base?: string,
): string {
  if (flag !== undefined && flag !== "") return userPath(flag, base);
  if (env !== undefined && env !== "") return userPath(env, base);
  return DEFAULT_ROOT;
}

/**
 * A path as the user meant it: relative to their own folder when `deno
 * task` runs the entry from the checkout (`base` is then `INIT_CWD`).
 *
 * @param path The path the user typed.
 * @param base The user's folder, if known.
 * @returns `path` itself when absolute or without a base, else the path
 *   under `base`.
 */
export function userPath(path: string, base?: string): string {
  if (!base || isAbsolute(path)) return path;
  return resolve(base, path);
}

/**
 * What the `deno task` entries add to `--allow-write`: `,<dir>` for the
 * store `HARNESS_ROOT` names (taken from the user's folder when relative),
 * or nothing — so a task writes its checkout's `.harness` and the store
 * the user chose, and no other place.
 *
 * @param env The environment (as far as it may be read).
 * @returns `,<absolute dir>` or "".
 */
export function rootWriteGrant(
  env: (name: string) => string | undefined,
): string {
  const root = env("HARNESS_ROOT");
  if (!root) return "";
  const base = env("INIT_CWD");
  if (!isAbsolute(root) && !base) return "";
  const abs = join(resolve(base ?? "/", root));
  // A comma would split Deno's flag list; such a root is not granted.
  return abs.includes(",") ? "" : `,${abs}`;
}
