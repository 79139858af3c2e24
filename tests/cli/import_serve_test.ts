/**
 * `import` while `serve` runs (the README's order): the file goes through
 * the server that holds the store, all or nothing, with the same refusals
 * as a local import.
 *
 * @module
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { runMain } from "../_cli.ts";
import { startServer } from "../_server.ts";

const FIXTURE =
  new URL("../../fixtures/tau2_retail_slice.json", import.meta.url).pathname;

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test({
  ...opts,
  name:
    "importCommand() imports through the running server that holds the store, and refuses the same file twice",
  async fn() {
    await using srv = await startServer();
    const args = [
      "import",
      "--format",
      "tau2",
      FIXTURE,
      "--capture",
      "imp",
      "--root",
      srv.root,
      "--json",
    ];
    const first = await runMain(args);
    assertEquals(first.code, 0, first.err);
    const summary = JSON.parse(first.out);
    assertEquals(summary.via, srv.url);
    let sealed = 0;
    for await (const _ of srv.store.readEvents("imp")) sealed++;
    assertEquals(sealed, summary.events);
    assertOk(summary.episodes > 0);

    const again = await runMain(args);
    assertEquals(again.code, 1);
    assertOk(/already imported/.test(again.err), again.err);
    let after = 0;
    for await (const _ of srv.store.readEvents("imp")) after++;
    assertEquals(after, sealed);
  },
});

Deno.test({
  ...opts,
  name:
    "importCommand() says to stop the server when the file is more than it takes in one request, and records nothing",
  async fn() {
    await using srv = await startServer({ maxBodyBytes: 4096 });
    const r = await runMain([
      "import",
      "--format",
      "tau2",
      FIXTURE,
      "--capture",
      "big",
      "--root",
      srv.root,
    ]);
    assertEquals(r.code, 1);
    assertOk(/stop the server \(deno task ingest stop\)/.test(r.err), r.err);
    assertEquals(srv.store.hasCapture("big"), false);
  },
});
