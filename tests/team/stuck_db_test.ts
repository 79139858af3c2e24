import { assertEquals, assertOk } from "../_assert.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { annotation } from "../../lib/trace/mod.ts";
import { Replicator } from "../../lib/team/replicator.ts";
import { serve } from "../../lib/cli/cmd_serve.ts";
import { startStuckPg } from "./_stuck_pg.ts";
import { tempDir } from "../_helpers.ts";
import { runMain as main } from "../_cli.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test({
  ...opts,
  name:
    "capture list, db migrate and store push against a database that never answers a query each error within 10 s, saying what to do",
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
      const t0 = Date.now();
      const r = await main(args);
      const took = Date.now() - t0;
      assertEquals(r.code, 1, args.join(" ") + r.out + r.err);
      // The statement time-out (8 s) or the connect time-out (5 s) ends
      // it, as the message says; the clock only guards against a hang.
      assertOk(took < 120_000, `${args.join(" ")} took ${took} ms`);
      assertOk(/did not answer .* within/.test(r.err), r.err);
      assertOk(/check that PostgreSQL is running/.test(r.err), r.err);
    }
  },
});

Deno.test({
  ...opts,
  name:
    "Replicator marks replication stalled when the database never answers, and stop() returns after its grace (1 s), not waiting on the database",
  async fn() {
    using pg = startStuckPg();
    await using dir = await tempDir();
    using store = new HarnessStore(dir.path);
    const rep = new Replicator(store, pg.url, {
      intervalMs: 20,
      stallAfterMs: 300,
      statementTimeoutMs: 1000,
    });
    store.sink("c").emit(annotation({
      captureId: "c",
      episodeId: "ep_1",
      source: { host: "harness", adapter: "test", model: null },
    }, { type: "note" }));
    rep.start();
    const deadline = Date.now() + 8_000;
    while (!rep.status.stalled && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    assertEquals(rep.status.stalled, true, JSON.stringify(rep.status));
    assertEquals(rep.status.lag_events, 1);
    const t0 = Date.now();
    await rep.stop();
    // Two graces of 1 s at most; the clock only guards against a hang.
    assertOk(Date.now() - t0 < 20_000, `stop took ${Date.now() - t0} ms`);
  },
});

Deno.test({
  ...opts,
  name:
    "a server replicating to a database that never answers says ok:false on /health once stalled, and stops without waiting out the statement time-out (60 s), its events kept",
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
      replicateStatementTimeoutMs: 60_000,
      stopSignal,
    }, io);
    let url = "";
    for (let i = 0; i < 200 && !url; i++) {
      url = /on (http:\/\/\S+)/.exec(out)?.[1] ?? "";
      if (!url) await new Promise((r) => setTimeout(r, 20));
    }
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
    let health: Record<string, unknown> = {};
    const deadline = Date.now() + 8_000;
    while (Date.now() < deadline) {
      health = await (await fetch(`${url}/health`)).json();
      if (health.ok === false) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assertEquals(health.ok, false, JSON.stringify(health));
    const rep = health.replication as Record<string, unknown>;
    assertEquals(rep.stalled, true);
    assertOk(!JSON.stringify(health).includes("s3cret-pw"));
    const t0 = Date.now();
    stop();
    assertEquals(await running, 0);
    // The replicator's graces (2 s at most), well short of the statement
    // time-out it would otherwise wait out.
    assertOk(Date.now() - t0 < 30_000, `stop took ${Date.now() - t0} ms`);
    using store = new HarnessStore(dir.path, { readOnly: true });
    assertEquals(store.getCapture("live")?.event_count, 1);
  },
});
