/**
 * Environment reads that respect narrow permissions: a variable the process
 * may not read is treated as unset instead of prompting or throwing.
 *
 * @module
 */

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
