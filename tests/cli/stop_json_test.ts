/**
 * `stop --json`: one JSON object, like every command that prints a result.
 *
 * @module
 */
import { assertEquals } from "../_assert.ts";
import { runMain } from "../_cli.ts";
import { tempDir } from "../_helpers.ts";

Deno.test("ingest.ts stop --json says in one object that no server was running", async () => {
  await using dir = await tempDir();
  const r = await runMain(["stop", "--json", "--root", dir.path]);
  assertEquals(r.code, 0, r.err);
  assertEquals(JSON.parse(r.out), {
    stopped: true,
    was_running: false,
    url: null,
    pid: null,
    killed: false,
  });
});
