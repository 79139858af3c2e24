/**
 * OTLP export benchmark: 100,000 order-desk events mapped to OTLP JSON
 * traces and serialized (`captureToOtlp` + `JSON.stringify`), beside a
 * plain `JSON.stringify` of the same events in the same run (the
 * baseline: what writing them out at all costs), and the same as OTLP
 * protobuf. Target: ≥ 20,000 spans/s.
 *
 * @module
 */
import { HarnessStore } from "../lib/store/mod.ts";
import { generateDeskEpisodes } from "../examples/order_desk/order_desk.ts";
import { captureToOtlp } from "../lib/otel/export.ts";
import { encodeOtlpProtobuf } from "../lib/otel/protobuf.ts";
import type { TraceEvent } from "../lib/trace/mod.ts";
import { type BenchRow, printTable, rate } from "./_table.ts";

/** Run the benchmark and print its table. */
export async function exportBench(): Promise<BenchRow[]> {
  const dir = await Deno.makeTempDir({ prefix: "harness_bench_export_" });
  try {
    const events: TraceEvent[] = [];
    {
      using store = new HarnessStore(dir);
      // About 15 events per episode.
      generateDeskEpisodes(store.sink("desk"), "desk", 6700);
      for await (const ev of store.readEvents("desk")) events.push(ev);
    }
    let t = performance.now();
    const plain = JSON.stringify(events).length;
    const baseMs = performance.now() - t;
    t = performance.now();
    const traces = captureToOtlp("desk", events);
    const bytes = JSON.stringify(traces).length;
    const ms = performance.now() - t;
    const spans = traces.resourceSpans[0].scopeSpans[0].spans.length;
    const perS = spans / (ms / 1000);
    t = performance.now();
    const pbBytes = encodeOtlpProtobuf(captureToOtlp("desk", events)).length;
    const pbMs = performance.now() - t;
    const pbPerS = spans / (pbMs / 1000);
    const rows: BenchRow[] = [
      { name: "events", value: events.length.toLocaleString("en-US") },
      { name: "spans", value: spans.toLocaleString("en-US") },
      {
        name: "export (map + serialize)",
        value: rate(perS),
        target: "≥ 20,000/s",
        met: perS >= 20_000 ? "yes" : "no",
      },
      {
        name: "time vs plain JSON.stringify of the events",
        value: `${(ms / baseMs).toFixed(2)}× (${Math.round(ms)} vs ${
          Math.round(baseMs)
        } ms; ${(bytes / plain).toFixed(2)}× bytes)`,
      },
      {
        name: "export as protobuf (map + encode)",
        value: rate(pbPerS),
        target: "≥ 20,000/s",
        met: pbPerS >= 20_000 ? "yes" : "no",
      },
      {
        name: "protobuf vs JSON export",
        value: `${(pbMs / ms).toFixed(2)}× time, ${
          (pbBytes / bytes).toFixed(2)
        }× bytes`,
      },
    ];
    printTable("OTLP export", rows);
    return rows;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) await exportBench();
