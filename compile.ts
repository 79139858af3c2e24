/**
 * The compile entry: turns captures into behavior packages.
 *
 * Permissions: `--allow-read=<store>` and `--allow-write=<output dir>`.
 *
 * @module
 */

/**
 * Run one command line.
 *
 * @param _args Command-line arguments.
 * @returns The exit code.
 */
export function main(_args: string[]): number {
  console.error(
    "harness compile: the compiler is not part of this build yet; see ARCHITECTURE.md for its status",
  );
  return 1;
}

if (import.meta.main) Deno.exit(main(Deno.args));
