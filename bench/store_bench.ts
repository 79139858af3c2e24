/**
 * Store benchmarks: in-process append rate, chain-verify rate against plain
 * SHA-256 over the same lines in the same run, index rebuild of a 100k-event
 * capture.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import { HarnessStore } from "../lib/store/mod.ts";
import { toolCallCompleted } from "../lib/trace/mod.ts";
import { readChunks } from "../lib/store/file_chunks.ts";
import { verifyChain } from "../lib/trace/jsonl.ts";
import { splitLines } from "../lib/trace/lines.ts";
import { type BenchRow, printTable, rate } from "./_table.ts";

/**
 * Run the store benchmarks.
 *
 * @param events Events in the measured capture.
 * @returns The rows printed.
 */
export async function storeBench(events = 100_000): Promise<BenchRow[]> {
  const root = await Deno.makeTempDir({ prefix: "harness_bench_" });
  try {
    const rows: BenchRow[] = [];
    const store = new HarnessStore(root);
    const sink = store.sink("cap_bench");
    const ctx = {
      captureId: "cap_bench",
      episodeId: "ep_1",
      source: { host: "gateway", adapter: "bench", model: null },
    };
    const tool = { host_name: "get_order", logical_id: "get_order" };
    // Warm up the JIT on a separate capture.
    const warm = store.sink("cap_warm");
    for (let i = 0; i < 5000; i++) {
      warm.emit(toolCallCompleted({ ...ctx, captureId: "cap_warm" }, {
        tool,
        arguments: { order_id: `O-${i}` },
        result: { status: "ok" },
      }));
    }
    let t0 = performance.now();
    for (let i = 0; i < events; i++) {
      if (i % 10_000 === 0) ctx.episodeId = `ep_${i / 10_000}`;
      sink.emit(toolCallCompleted(ctx, {
        tool,
        arguments: { order_id: `O-${i}` },
        result: { status: "delivered", total: i % 100 },
      }));
    }
    store.flush();
    const appendS = (performance.now() - t0) / 1000;
    const appendRate = events / appendS;
    rows.push({
      name: `append, ${
        events.toLocaleString("en-US")
      } small events (sink.emit, indexed)`,
      value: rate(appendRate),
      target: ">= 100,000/s",
      met: appendRate >= 100_000 ? "yes" : "no",
    });
    // Append only: events built beforehand, so the figure is the store's cost.
    const prebuilt = [];
    const pctx = { ...ctx, captureId: "cap_prebuilt" };
    for (let i = 0; i < events; i++) {
      prebuilt.push(toolCallCompleted(pctx, {
        tool,
        arguments: { order_id: `O-${i}` },
        result: { status: "delivered", total: i % 100 },
      }));
    }
    const pre = store.sink("cap_prebuilt");
    t0 = performance.now();
    for (const ev of prebuilt) pre.emit(ev);
    store.flush();
    const preRate = events / ((performance.now() - t0) / 1000);
    rows.push({
      name: "append only (events built beforehand), sink.emit",
      value: rate(preRate),
      target: ">= 100,000/s",
      met: preRate >= 100_000 ? "yes" : "no",
    });
    prebuilt.length = 0;

    // The same with emitMany: one write per batch of 64, acknowledged together.
    const batched = store.sink("cap_batched");
    const bctx = { ...ctx, captureId: "cap_batched" };
    t0 = performance.now();
    for (let i = 0; i < events; i += 64) {
      const batch = [];
      for (let j = i; j < Math.min(events, i + 64); j++) {
        batch.push(toolCallCompleted(bctx, {
          tool,
          arguments: { order_id: `O-${j}` },
          result: { status: "delivered", total: j % 100 },
        }));
      }
      batched.emitMany(batch);
    }
    store.flush();
    const batchRate = events / ((performance.now() - t0) / 1000);
    rows.push({
      name: "append, same events via emitMany (64 per write)",
      value: rate(batchRate),
      target: ">= 100,000/s",
      met: batchRate >= 100_000 ? "yes" : "no",
    });
    store.close();
    await Deno.remove(join(root, "captures", "cap_batched.jsonl"));
    await Deno.remove(join(root, "captures", "cap_prebuilt.jsonl"));

    const spool = join(root, "captures", "cap_bench.jsonl");
    const size = (await Deno.stat(spool)).size;
    // Baseline 1: SHA-256 of each line (the irreducible per-event hash).
    t0 = performance.now();
    let lines = 0;
    for await (const l of splitLines(readChunks(spool))) {
      createHash("sha256").update(l.bytes).digest("hex");
      lines++;
    }
    const perLineS = (performance.now() - t0) / 1000;
    // Baseline 2: SHA-256 of the whole file in one stream.
    t0 = performance.now();
    const h = createHash("sha256");
    for await (const c of readChunks(spool)) h.update(c);
    h.digest("hex");
    const bulkS = (performance.now() - t0) / 1000;
    t0 = performance.now();
    const report = await verifyChain(readChunks(spool), {
      captureId: "cap_bench",
    });
    const verifyS = (performance.now() - t0) / 1000;
    if (!report.ok || report.events !== events) {
      throw new Error(`verify failed: ${JSON.stringify(report.problem)}`);
    }
    const ratio = perLineS / verifyS;
    rows.push({
      name: `chain verify, ${lines.toLocaleString("en-US")} lines, ${
        (size / 1e6).toFixed(1)
      } MB`,
      value: `${rate(events / verifyS)} (${
        (size / 1e6 / verifyS).toFixed(0)
      } MB/s)`,
    });
    rows.push({
      name: "  ratio to SHA-256 per line (same lines, same run)",
      value: ratio.toFixed(2),
      target: ">= 0.5",
      met: ratio >= 0.5 ? "yes" : "no",
    });
    rows.push({
      name: "  ratio to SHA-256 of the whole file in one stream",
      value: (bulkS / verifyS).toFixed(2),
    });

    // Index rebuild of the 100k-event capture.
    await Deno.remove(join(root, "captures", "cap_warm.jsonl"));
    const again = new HarnessStore(root);
    t0 = performance.now();
    const rebuilt = again.rebuildIndex();
    const rebuildS = (performance.now() - t0) / 1000;
    again.close();
    rows.push({
      name: `index rebuild, ${
        rebuilt.events.toLocaleString("en-US")
      }-event capture`,
      value: `${rebuildS.toFixed(2)} s`,
      target: "<= 5 s",
      met: rebuildS <= 5 ? "yes" : "no",
    });
    printTable("Store", rows);
    return rows;
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

if (import.meta.main) await storeBench();
