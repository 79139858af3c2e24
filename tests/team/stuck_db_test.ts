import { assertEquals, assertOk } from "../_assert.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { annotation } from "../../lib/trace/mod.ts";
import { Replicator } from "../../lib/team/replicator.ts";
import { serve } from "../../lib/cli/cmd_serve.ts";
import { startStuckPg } from "./_stuck_pg.ts";
import { tempDir } from "../_helpers.ts";
import { runMain as main } from "../_cli.ts";
import { waitFor } from "../_wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test({
  ...opts,
  name:
    "capture list, db migrate and store push against a database that never answers a query each end in an error at their time-out, saying what to do",
  async fn() {
    using pg = startStuckPg();
    await using dir = await tempDir();
    {
      using store = new HarnessStore(dir.path);
      store.sink("c").emit(annotation({
        captureId: "c",
        episodeId: "ep_1",
        source: { host: "harness", adapter: "test", model: null },
      }, { type: "note" }));
    }
    for (
      const args of [
        ["capture", "list", "--db", pg.url],
        ["db", "migrate", "--db", pg.url],
        ["store", "push", "--to", pg.url, "--root", dir.path],
      ]
    ) {
      const r = await main(args);
      assertEquals(r.code, 1, args.join(" ") + r.out + r.err);
      // The statement time-out (8 s) or the connect time-out (5 s) ends
      // it, as the message says. How long that takes is a row of
      // `deno task bench reliability` ("each call errors < 10 s").
      assertOk(/did not answer .* within/.test(r.err), r.err);
      assertOk(/check that PostgreSQL is running/.test(r.err), r.err);
    }
  },
});

Deno.test({
  ...opts,
  name:
    "Replicator marks replication stalled when the database never answers, and stop() returns after its grace, not waiting on the database",
  async fn() {
    using pg = startStuckPg();
    await using dir = await tempDir();
    using store = new HarnessStore(dir.path);
    const rep = new Replicator(store, pg.url, {
      intervalMs: 20,
      stallAfterMs: 300,
      // Longer than any test runs: stop() returning at all shows it did
      // not wait on the database (its grace is 1 s; how long stop takes is
      // a row of `deno task bench reliability`, "stop < 5 s").
      statementTimeoutMs: 600_000,
    });
    store.sink("c").emit(annotation({
      captureId: "c",
      episodeId: "ep_1",
      source: { host: "harness", adapter: "test", model: null },
    }, { type: "note" }));
    rep.start();
    await waitFor("replication marked stalled", () => rep.status.stalled);
    assertEquals(rep.status.stalled, true, JSON.stringify(rep.status));
    assertEquals(rep.status.lag_events, 1);
    await rep.stop();
  },
});

Deno.test({
  ...opts,
  name:
    "a server replicating to a database that never answers says ok:false on /health once stalled, and stops without waiting out the statement time-out (10 min), its events kept",
  async fn() {
    using pg = startStuckPg();
    await using dir = await tempDir();
    let stop!: () => void;
    const stopSignal = new Promise<void>((r) => stop = r);
    let out = "";
    const io = { out: (t: string) => out += t + "\n", err: () => {} };
    const running = serve({
      root: dir.path,
      host: "127.0.0.1",
      port: 0,
      allowRemote: false,
      noRedact: false,
      replicate: `postgres://harness:s3cret-pw@127.0.0.1:${pg.port}/team`,
      replicateStallMs: 300,
      // Longer than any test runs: the server stopping at all shows it
      // did not wait it out.
      replicateStatementTimeoutMs: 600_000,
      stopSignal,
    }, io);
    const url = await waitFor(
      "the server's start line",
      () => /on (http:\/\/\S+)/.exec(out)?.[1],
    );
    const ev = annotation({
      captureId: "live",
      episodeId: "ep_1",
      source: { host: "harness", adapter: "test", model: null },
    }, { type: "note" });
    const res = await fetch(`${url}/ingest`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(ev),
    });
    assertEquals(res.status, 200, await res.text());
    const health: Record<string, unknown> = await waitFor(
      "/health to say ok:false",
      async () => {
        const h = await (await fetch(`${url}/health`)).json();
        return h.ok === false ? h : null;
      },
      { everyMs: 50 },
    );
    assertEquals(health.ok, false, JSON.stringify(health));
    const rep = health.replication as Record<string, unknown>;
    assertEquals(rep.stalled, true);
    assertOk(!JSON.stringify(health).includes("s3cret-pw"));
    stop();
    assertEquals(await running, 0);
    using store = new HarnessStore(dir.path, { readOnly: true });
    assertEquals(store.getCapture("live")?.event_count, 1);
  },
});
