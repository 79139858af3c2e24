/**
 * The ingest server's module graph, as `deno info --json` resolves it: the
 * server holds no importer (only the error type they share and the
 * once-per-file rule) and nothing of
 * the MCP proxy, so a change to either cannot reach the capture path.
 */
import { assertEquals, assertOk } from "../_assert.ts";

const ROOT = new URL("../../", import.meta.url);

/** Local modules (paths relative to the repository) reachable from `entry`. */
async function localModules(entry: string): Promise<string[]> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", entry],
    cwd: ROOT.pathname,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(
      `deno info ${entry} failed: ${new TextDecoder().decode(out.stderr)}`,
    );
  }
  const info = JSON.parse(new TextDecoder().decode(out.stdout)) as {
    modules: { specifier: string }[];
  };
  return info.modules
    .map((m) => m.specifier)
    .filter((s) => s.startsWith(ROOT.href))
    .map((s) => s.slice(ROOT.href.length))
    .sort();
}

for (const entry of ["lib/ingest/server.ts", "lib/cli/cmd_serve.ts"]) {
  Deno.test(`${entry}'s module graph holds no importer and no MCP proxy module`, async () => {
    const modules = await localModules(entry);
    assertOk(
      modules.includes("lib/ingest/handler.ts"),
      `the walk reached the handler (${modules.length} modules)`,
    );
    assertEquals(
      modules.filter((m) =>
        m.startsWith("lib/importers/") || m.startsWith("lib/proxy/")
      ),
      // The importers' error, the check every importer runs on its events
      // (OTLP JSON files use it too) and the once-per-file rule the server
      // applies to imports (`import_repeat.ts`, no reader): no importer.
      [
        "lib/importers/import_error.ts",
        "lib/importers/import_repeat.ts",
        "lib/importers/sealable.ts",
      ],
    );
  });
}
