/**
 * Upstream MCP servers for the proxy tests.
 *
 * @module
 */

/** The pinned reference server from npm. */
export const EVERYTHING =
  "npm:@modelcontextprotocol/server-everything@2026.8.31";

/** How to start the reference server under this Deno. */
export function everythingUpstream(server = "everything") {
  return {
    server,
    command: Deno.execPath(),
    args: ["run", "--quiet", "-A", EVERYTHING, "stdio"],
  };
}

/** Download the reference server once, so the first test does not time out on it. */
export async function cacheEverything(): Promise<void> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["cache", "--quiet", EVERYTHING],
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(
      `deno cache ${EVERYTHING} failed: ${
        new TextDecoder().decode(out.stderr)
      }`,
    );
  }
}

/** A small upstream of our own with tools that crash or hang. */
export const FLAKY = new URL("./_flaky_server.ts", import.meta.url).pathname;
