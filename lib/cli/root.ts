/**
 * Which store a command uses: `--root`, else `HARNESS_ROOT`, else
 * {@linkcode DEFAULT_ROOT} in the current directory.
 *
 * @module
 */

/** The default store root, relative to the current directory. */
export const DEFAULT_ROOT = ".harness";

/**
 * Pick the store root.
 *
 * @param flag The `--root` value, if given.
 * @param env The `HARNESS_ROOT` value, if set.
 * @returns The root to use.
 */
export function resolveRoot(flag?: string, env?: string): string {
  if (flag !== undefined && flag !== "") return flag;
  if (env !== undefined && env !== "") return env;
  return DEFAULT_ROOT;
}
