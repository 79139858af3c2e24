/**
 * Shared setup for the `install --gateway` tests (`gateway_install_*_test.ts`):
 * the gateway URL they install and two small file-system probes.
 */

/** The gateway URL every test installs. */
export const URL_ = "http://127.0.0.1:8848";

/** The sorted entry names of `dir`; none when it does not exist. */
export function names(dir: string): string[] {
  try {
    return [...Deno.readDirSync(dir)].map((e) => e.name).sort();
  } catch {
    return [];
  }
}

/** Whether anything exists at `path`. */
export function isThere(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}
