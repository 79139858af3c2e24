/**
 * `deno task bench replicate`: the team store against a private local
 * PostgreSQL 15 cluster — replication throughput (a backlog of 50,000
 * events shipped by one push loop), replication lag at 1,000 events/s
 * (p50 and p99 of the time from the local acknowledgement to the row
 * being in the database), compile of 10,000 order-desk episodes from the
 * database against the same from the local spools, and the local append
 * time with replication on against off.
 *
 * @module
 */
import { HarnessStore } from "../lib/store/mod.ts";
import { annotation } from "../lib/trace/mod.ts";
import { loadEpisodes } from "../lib/lineage/episodes.ts";
import { compileBehavior } from "../lib/compiler/compile_behavior.ts";
import { connectDb, migrate } from "../lib/team/db.ts";
import { pushCapture } from "../lib/team/push.ts";
import { Replicator } from "../lib/team/replicator.ts";
import { DbStore } from "../lib/team/db_store.ts";
import { storeId } from "../lib/team/store_id.ts";
import {
  DESK_EFFECTS,
  generateDeskEpisodes,
} from "../examples/order_desk/order_desk.ts";
import { startCluster } from "../tests/_postgres.ts";
import { printTable, rate } from "./_table.ts";

const ctx = (cap: string) => ({
  captureId: cap,
  episodeId: "ep_1",
  source: { host: "bench", adapter: "bench", model: null },
});

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

// Over 80 lines: the benchmark's phases in order over one database cluster and store.
/** Run the replication benchmark. */
export async function replicateBench(): Promise<void> {
  await using pg = await startCluster();
  const dir = await Deno.makeTempDir({ prefix: "harness_rep_" });
  try {
    // Throughput: a backlog shipped as fast as pushes go.
    using store = new HarnessStore(`${dir}/a`);
    const sink = store.sink("bulk");
    const evs = Array.from(
      { length: 50_000 },
      (_, i) =>
        annotation(ctx("bulk"), { type: "note", i, text: "x".repeat(80) }),
    );
    for (let i = 0; i < evs.length; i += 1000) {
      sink.emitMany(evs.slice(i, i + 1000));
    }
    store.flush();
    const sql = await connectDb(pg.url, { max: 2 });
    await migrate(sql);
    const sid = storeId(store.root);
    const t0 = performance.now();
    let head = 0;
    while (head < 50_000) {
      head = (await pushCapture(sql, {
        store,
        storeId: sid,
        captureId: "bulk",
        after: head,
      })).head;
    }
    const shipRate = 50_000 / ((performance.now() - t0) / 1000);
    await sql.end();

    // Lag at 1,000 events/s with the background replicator.
    using live = new HarnessStore(`${dir}/b`);
    const rep = new Replicator(live, pg.url, { intervalMs: 50 });
    rep.start();
    const lsink = live.sink("live");
    const ackedAt = new Map<number, number>();
    const appendMs: number[] = [];
    const lags: number[] = [];
    const watch = await connectDb(pg.url, { max: 1 });
    let producing = true;
    const producer = (async () => {
      for (let i = 0; i < 5000; i++) {
        const a0 = performance.now();
        const ev = lsink.emit(annotation(ctx("live"), { type: "note", i }));
        const a1 = performance.now();
        appendMs.push(a1 - a0);
        ackedAt.set(ev.sequence, a1);
        if (i % 10 === 9) await new Promise((r) => setTimeout(r, 10));
      }
      producing = false;
    })();
    // Watch the database while the events arrive.
    const watcher = (async () => {
      let top = 0;
      const deadline = performance.now() + 60_000;
      while ((producing || top < 5000) && performance.now() < deadline) {
        const rows = await watch`SELECT sequence FROM events
          WHERE capture_id = 'live' AND sequence > ${top} ORDER BY sequence`;
        const now = performance.now();
        for (const r of rows) {
          const s = Number(r.sequence);
          lags.push(now - ackedAt.get(s)!);
          top = Math.max(top, s);
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    await Promise.all([producer, watcher]);
    await watch.end();
    await rep.stop();

    // The same appends with no replication, for the ack-time comparison.
    using plain = new HarnessStore(`${dir}/c`);
    const psink = plain.sink("live");
    const plainMs: number[] = [];
    for (let i = 0; i < 5000; i++) {
      const a0 = performance.now();
      psink.emit(annotation(ctx("live"), { type: "note", i }));
      plainMs.push(performance.now() - a0);
      if (i % 10 === 9) await new Promise((r) => setTimeout(r, 10));
    }

    // Compile of 10,000 episodes: local spools against the database.
    using desk = new HarnessStore(`${dir}/d`);
    generateDeskEpisodes(desk.sink("desk"), "desk", 10_000);
    desk.flush();
    const dsql = await connectDb(pg.url, { max: 2 });
    let dh = 0;
    const total = desk.getCapture("desk")!.head_sequence;
    while (dh < total) {
      dh = (await pushCapture(dsql, {
        store: desk,
        storeId: storeId(desk.root),
        captureId: "desk",
        after: dh,
      })).head;
    }
    await dsql.end();
    const c0 = performance.now();
    compileBehavior(await loadEpisodes(desk, "desk"), {
      name: "desk",
      effects: DESK_EFFECTS,
    });
    const localMs = performance.now() - c0;
    const db = await DbStore.open(pg.url);
    const c1 = performance.now();
    compileBehavior(await loadEpisodes(db, db.resolveName("desk")), {
      name: "desk",
      effects: DESK_EFFECTS,
    });
    const dbMs = performance.now() - c1;
    await db.close();

    printTable("Team store (PostgreSQL 15, local private cluster)", [
      {
        name: "replication of a 50,000-event backlog",
        value: rate(shipRate),
        target: ">= 10,000/s",
        met: shipRate >= 10_000 ? "yes" : "no",
      },
      {
        name: "replication lag at ~1,000 events/s, p50",
        value: `${quantile(lags, 0.5).toFixed(0)} ms`,
      },
      {
        name: "replication lag at ~1,000 events/s, p99",
        value: `${quantile(lags, 0.99).toFixed(0)} ms (${lags.length} events)`,
        target: "<= 1000 ms",
        met: quantile(lags, 0.99) <= 1000 ? "yes" : "no",
      },
      {
        name: "local append (ack) p50 with replication on / off",
        value: `${(quantile(appendMs, 0.5) * 1000).toFixed(0)} µs / ${
          (quantile(plainMs, 0.5) * 1000).toFixed(0)
        } µs`,
      },
      {
        name: "local append (ack) p99 with replication on / off",
        value: `${(quantile(appendMs, 0.99) * 1000).toFixed(0)} µs / ${
          (quantile(plainMs, 0.99) * 1000).toFixed(0)
        } µs`,
        target: "unchanged within noise",
      },
      {
        name: "compile 10,000 episodes from the database / from spools",
        value: `${(dbMs / 1000).toFixed(1)} s / ${
          (localMs / 1000).toFixed(1)
        } s = ${(dbMs / localMs).toFixed(2)}x`,
        target: "<= 2x",
        met: dbMs <= 2 * localMs ? "yes" : "no",
      },
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) await replicateBench();
