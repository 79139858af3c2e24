/**
 * Test helper: run a `deno task` of this checkout from another folder.
 *
 * @module
 */

/** The checkout (ends with a slash). */
export const CHECKOUT = new URL("../../", import.meta.url).pathname;

/** Runs `deno task <args>` from `cwd` with the checkout's deno.json. */
export async function task(
  cwd: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; out: string; err: string }> {
  const r = await new Deno.Command(Deno.execPath(), {
    args: ["task", "--quiet", "--config", `${CHECKOUT}deno.json`, ...args],
    cwd,
    // As from a shell in `cwd`: under `deno task ok` the tests inherit the
    // gate's INIT_CWD, which deno task would otherwise keep.
    env: { NO_COLOR: "1", INIT_CWD: cwd, ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: r.code, out: dec.decode(r.stdout), err: dec.decode(r.stderr) };
}
