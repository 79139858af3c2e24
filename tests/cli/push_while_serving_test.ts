/**
 * `store push --to env` while the server runs: the message is about
 * pushing (stop the server for a push by hand, or let it ship with
 * `--replicate`), not about sending events to the server.
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { join } from "node:path";
import { tempDir } from "../_helpers.ts";
import { task } from "./_tasks.ts";
import { startServe } from "./_serve_process.ts";

Deno.test("deno task ingest store push --to env beside a running server says to stop it first or to serve --replicate env, and pushes nothing", async () => {
  await using dir = await tempDir();
  const root = join(dir.path, ".harness");
  await using serve = await startServe(root, { args: ["--no-model-gateway"] });
  const r = await task(dir.path, ["ingest", "store", "push", "--to", "env"], {
    HARNESS_ROOT: root,
    // Nothing listens there: the store is refused before any connection.
    HARNESS_DB_URL: "postgres://harness@127.0.0.1:9/team",
  });
  assertEquals(r.code, 1, r.out + r.err);
  assertOk(
    r.err.startsWith(`harness: store push needs the store ${root} to itself`),
    r.err,
  );
  assertOk(
    r.err.includes(`(ingest-server at ${serve.url}) holds it`),
    r.err,
  );
  assertOk(
    r.err.includes(
      "stop the server first (deno task ingest stop), push, then start it again; or let the server ship every event as it records: start it with --replicate env",
    ),
    r.err,
  );
  assertOk(!/send events to the ingest server/.test(r.err), r.err);
  assertEquals((await serve.stop()).code, 0);
});
