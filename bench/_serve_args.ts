/**
 * The arguments of `deno run … ingest.ts serve` for a benchmark: the serve
 * task's narrow permissions (read and write of one folder, loopback only,
 * the variables it reads) on a free loopback port.
 *
 * @module
 */

const INGEST = new URL("../ingest.ts", import.meta.url).pathname;

/** Options of {@linkcode serveArgs}. */
export interface ServeArgsOptions {
  /**
   * The store root (`--root`).
   *
   * @default the granted folder
   */
  store?: string;
  /**
   * Environment variables it may read beyond the two it always does.
   *
   * @default []
   */
  env?: string[];
  /**
   * The entry module (another checkout's `ingest.ts`).
   *
   * @default this checkout's `ingest.ts`
   */
  module?: string;
  /**
   * More serve flags.
   *
   * @default []
   */
  args?: string[];
}

/**
 * Deno's arguments to run `ingest.ts serve` on a free loopback port.
 *
 * @param grant The one folder it may read and write.
 * @param options The store root, more variables, the module, more flags.
 * @returns The arguments after `deno`.
 */
export function serveArgs(
  grant: string,
  options: ServeArgsOptions = {},
): string[] {
  return [
    "run",
    `--allow-read=${grant}`,
    `--allow-write=${grant}`,
    "--allow-net=127.0.0.1",
    `--allow-env=${
      ["HARNESS_ROOT", "HARNESS_INGEST_TOKEN", ...(options.env ?? [])].join(",")
    }`,
    options.module ?? INGEST,
    "serve",
    "--port",
    "0",
    "--root",
    options.store ?? grant,
    ...(options.args ?? []),
  ];
}
