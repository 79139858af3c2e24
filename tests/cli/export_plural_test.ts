/**
 * `export --endpoint` says "in 1 request", not "in 1 requests" (issue 48,
 * item 6). The endpoint is an ingest server's own OTLP route.
 *
 * @module
 */
import { join } from "node:path";
import { assertEquals, assertOk } from "../_assert.ts";
import { runMain } from "../_cli.ts";
import { fixedContext, tempDir } from "../_helpers.ts";
import { startServer } from "../_server.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { episodeStarted, message } from "../../lib/trace/mod.ts";

Deno.test("export to an OTLP endpoint: one request is one request", async () => {
  await using dir = await tempDir();
  await using srv = await startServer();
  const root = join(dir.path, "s");
  {
    using store = new HarnessStore(root);
    const ctx = fixedContext("c", "ep_1");
    store.sink("c").emitMany([
      episodeStarted(ctx),
      message(ctx, { role: "user", text: "hello" }),
    ]);
  }
  const r = await runMain(
    ["export", "c", "--endpoint", `${srv.url}/v1/traces`, "--root", root],
  );
  assertEquals(r.code, 0, r.err);
  assertOk(/ in 1 request \(0 retries\)/.test(r.out), r.out);
});
