/**
 * What a package may be called. The name becomes a file name
 * (`<out>/<name>.package.json`, `<root>/packages/<name>-<digest>.package.json`),
 * so it is one plain file-name word: letters, digits, `.`, `_` and `-`,
 * starting with a letter or a digit — never a path (`../x`, `a/b`), never
 * hidden (`.x`).
 *
 * @module
 */

/** The names a package may have. */
export const PACKAGE_NAME_PATTERN: RegExp = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/** The rule, in words (for a schema's message). */
export const PACKAGE_NAME_RULE =
  'use 1 to 100 letters, digits, ".", "_" or "-", starting with a letter or a digit';

/**
 * Why a package name cannot be used, or null when it can.
 *
 * @example
 * ```ts
 * import { packageNameProblem } from "./package_name.ts";
 * import assert from "node:assert/strict";
 * assert.equal(packageNameProblem("order_desk"), null);
 * assert.match(packageNameProblem("../../x")!, /not a package name/);
 * ```
 *
 * @param name The name asked for.
 * @returns A sentence naming the value and the rule, or null.
 */
export function packageNameProblem(name: string): string | null {
  if (PACKAGE_NAME_PATTERN.test(name)) return null;
  return `${
    JSON.stringify(name)
  } is not a package name: ${PACKAGE_NAME_RULE} (the name becomes a file name, so no "/" and no "..")`;
}
