/**
 * Test helper: run the `ingest.ts` CLI in-process and collect what it prints.
 *
 * @module
 */

/** What one CLI run returned and printed (one line per call, `\n`-ended). */
export interface CliResult {
  code: number;
  out: string;
  err: string;
}

/**
 * Run `ingest.ts`'s `main` with the given arguments.
 *
 * @param args Command-line arguments.
 * @returns The exit code and the collected stdout and stderr text.
 */
export async function runMain(args: string[]): Promise<CliResult> {
  const { main } = await import("../ingest.ts");
  let out = "", err = "";
  const code = await main(args, {
    out: (t) => out += t + "\n",
    err: (t) => err += t + "\n",
  });
  return { code, out, err };
}
