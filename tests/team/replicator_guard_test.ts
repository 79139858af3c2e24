import { assertOk } from "../_assert.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { Replicator } from "../../lib/team/replicator.ts";
import { tempDir } from "../_helpers.ts";
import { waitFor } from "../_wait.ts";

Deno.test("an error npm:postgres throws from a timer after the database dropped the connection does not stop the process; the replicator notes it", async () => {
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path);
  // Nothing listens on port 1: rounds fail (and back off) through promises.
  const rep = new Replicator(store, "postgres://x@127.0.0.1:1/none", {
    intervalMs: 10_000,
  });
  rep.start();
  // Let the first round fail on its own (connection refused).
  await waitFor("the first round to fail", () => rep.status.last_error);
  // What postgres.js 3.4.9 throws when a scheduled write meets a closed socket.
  const err = new TypeError("Cannot read properties of null (reading 'write')");
  err.stack = `${err.name}: ${err.message}
    at Immediate.nextWrite (file:///cache/npm/registry.npmjs.org/postgres/3.4.9/src/connection.js:255:22)`;
  setTimeout(() => {
    throw err;
  }, 0);
  await waitFor(
    "the timer's error to reach the replicator",
    () => /reading 'write'/.test(rep.status.last_error ?? ""),
  );
  assertOk(
    /database connection failed: .*reading 'write'/.test(
      rep.status.last_error ?? "",
    ),
    String(rep.status.last_error),
  );
  await rep.stop();
});
