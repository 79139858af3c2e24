/**
 * `ingest.ts mcp` creates the store root owner-only (0700), as `serve`,
 * `capture start`, `import` and the demo do (issue 35, item 13).
 */
import { assertEquals } from "../_assert.ts";
import { join } from "node:path";
import { tempDir } from "../_helpers.ts";

const INGEST = new URL("../../ingest.ts", import.meta.url).pathname;

Deno.test({
  name: "ingest.ts mcp creates the store root owner-only (0700)",
  ignore: Deno.build.os === "windows",
  fn: async () => {
    await using dir = await tempDir();
    const root = join(dir.path, "mcp", "store");
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--quiet",
        "--allow-read",
        `--allow-write=${dir.path}`,
        "--allow-env",
        "--allow-net=127.0.0.1",
        INGEST,
        "mcp",
        "--root",
        root,
      ],
      // The host closes stdin at once: the server stops (MCP stdio shutdown).
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).output();
    assertEquals(out.code, 0, new TextDecoder().decode(out.stderr));
    assertEquals(Deno.statSync(root).mode! & 0o777, 0o700);
  },
});
