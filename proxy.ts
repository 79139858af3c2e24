/**
 * The MCP stdio proxy entry: records every call to an upstream MCP server.
 *
 * Permissions: `--allow-run=<upstream command>` and `--allow-write=<store>`.
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
    "harness proxy: the MCP proxy is not part of this build yet; see ARCHITECTURE.md for its status",
  );
  return 1;
}

if (import.meta.main) Deno.exit(main(Deno.args));
