/**
 * OTLP export benchmark: 100,000 order-desk events mapped to OTLP JSON
 * traces and serialized (`captureToOtlp` + `JSON.stringify`), beside a
 * plain `JSON.stringify` of the same events in the same run (the
 * baseline: what writing them out at all costs), and the same as OTLP
 * protobuf. Target: ≥ 20,000 spans/s.
 *
 * Then through a real `ingest.ts serve` subprocess: the OTLP intake
 * (`POST /v1/traces`, protobuf, 100 spans per request) beside `POST
 * /ingest` with the same episodes' events (100 per request), same client
 * (4 concurrent keep-alive fetches), same run; and the live stream's lag
 * (`serve --export-otlp`, acknowledgement of the event that finishes a
 * span → the span at a local collector) at 1,000 events/s for 10 s.
 *
 * @module
 */
import { startServeProcess } from "./_reliability.ts";
import { HarnessStore } from "../lib/store/mod.ts";
import { generateDeskEpisodes } from "../examples/order_desk/order_desk.ts";
import { join } from "node:path";
import { captureToOtlp, otlpRequest } from "../lib/otel/export.ts";
import type { OtlpSpan, OtlpTraces } from "../lib/otel/otlp_types.ts";
import { encodeOtlpProtobuf } from "../lib/otel/protobuf_encode.ts";
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
    const live = [
      ...await intakeRows(dir, events.slice(0, 30_000)),
      ...await streamLagRows(dir, events),
    ];
    printTable("OTLP intake and live stream (ingest.ts serve)", live);
    return [...rows, ...live];
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** `ingest.ts serve` on a free port (the shared starter); stop it with `kill`. */
function startServe(
  root: string,
  extra: string[] = [],
): Promise<{ url: string; child: Deno.ChildProcess }> {
  return startServeProcess(root, { args: extra });
}

async function stopServe(p: { child: Deno.ChildProcess }): Promise<void> {
  p.child.kill("SIGTERM");
  await p.child.status;
}

function unsealed(ev: TraceEvent) {
  const { sequence: _s, prev_event_hash: _p, event_hash: _h, ...rest } = ev;
  return rest;
}

/** POST every body, 4 at a time; milliseconds taken. */
async function postAll(
  url: string,
  bodies: (string | Uint8Array<ArrayBuffer>)[],
  headers: Record<string, string>,
): Promise<number> {
  let next = 0;
  const t = performance.now();
  await Promise.all(Array.from({ length: 4 }, async () => {
    while (next < bodies.length) {
      const body = bodies[next++];
      const res = await fetch(url, { method: "POST", headers, body });
      if (res.status !== 200) {
        throw new Error(`${url} answered ${res.status}: ${await res.text()}`);
      }
      await res.body?.cancel();
    }
  }));
  return performance.now() - t;
}

/** Intake spans/s against /ingest events/s for the same episodes. */
async function intakeRows(
  dir: string,
  events: TraceEvent[],
): Promise<BenchRow[]> {
  const cut = events.findLastIndex((e) => e.kind === "episode.started");
  events = events.slice(0, cut);
  const spans = captureToOtlp("desk", events).resourceSpans[0].scopeSpans[0]
    .spans;
  const protobufs: Uint8Array<ArrayBuffer>[] = [];
  for (let i = 0; i < spans.length; i += 100) {
    protobufs.push(
      encodeOtlpProtobuf(otlpRequest("desk", spans.slice(i, i + 100))),
    );
  }
  const jsons: string[] = [];
  for (let i = 0; i < events.length; i += 100) {
    jsons.push(JSON.stringify(events.slice(i, i + 100).map(unsealed)));
  }
  const otlp = await startServe(join(dir, "intake_otlp"));
  let otlpMs: number;
  try {
    otlpMs = await postAll(`${otlp.url}/v1/traces`, protobufs, {
      "content-type": "application/x-protobuf",
      "x-harness-capture": "otlp_in",
    });
  } finally {
    await stopServe(otlp);
  }
  const plain = await startServe(join(dir, "intake_ingest"));
  let ingestMs: number;
  try {
    ingestMs = await postAll(`${plain.url}/ingest`, jsons, {
      "content-type": "application/json",
    });
  } finally {
    await stopServe(plain);
  }
  const spansPerS = spans.length / (otlpMs / 1000);
  return [
    {
      name: `intake POST /v1/traces (protobuf, 100 spans/request; ${
        spans.length.toLocaleString("en-US")
      } spans)`,
      value: `${rate(spansPerS)} spans`,
    },
    {
      name: `POST /ingest, same episodes (100 events/request; ${
        events.length.toLocaleString("en-US")
      } events)`,
      value: `${rate(events.length / (ingestMs / 1000))} events`,
    },
    {
      name: "intake vs /ingest, time for the same episodes",
      value: `${(otlpMs / ingestMs).toFixed(2)}× (${Math.round(otlpMs)} vs ${
        Math.round(ingestMs)
      } ms)`,
    },
  ];
}

/** The live stream's lag p50/p99 at 1,000 events/s. */
async function streamLagRows(
  dir: string,
  events: TraceEvent[],
): Promise<BenchRow[]> {
  const acked = new Map<string, number>();
  const lags: number[] = [];
  const spanLag = (span: OtlpSpan, at: number) => {
    if (!span.parentSpanId) return; // a root: its last event is not named
    const id = (k: string) =>
      (span.attributes.find((a) => a.key === k)?.value as
        | { stringValue: string }
        | undefined)?.stringValue;
    const ev = id("harness.completion.event_id") ?? id("harness.event_id");
    const ack = ev ? acked.get(ev) : undefined;
    if (ack !== undefined) lags.push(at - ack);
  };
  const collector = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      const body: OtlpTraces = await req.json();
      const at = performance.now();
      for (const s of body.resourceSpans[0].scopeSpans[0].spans) spanLag(s, at);
      return Response.json({});
    },
  );
  const serve = await startServe(join(dir, "stream"), [
    "--export-otlp",
    `http://127.0.0.1:${collector.addr.port}/v1/traces`,
  ]);
  const total = 10_000;
  try {
    const start = performance.now();
    for (let i = 0; i < total; i += 50) {
      // 50 events every 50 ms: 1,000 events/s.
      const wait = start + i - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const slice = events.slice(i, i + 50);
      const res = await fetch(`${serve.url}/ingest`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(slice.map(unsealed)),
      });
      await res.body?.cancel();
      const at = performance.now();
      for (const ev of slice) acked.set(ev.event_id, at);
    }
    const deadline = performance.now() + 30_000;
    while (performance.now() < deadline) {
      const h = await (await fetch(`${serve.url}/health`)).json();
      if (h.otlp_export.lag_events === 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    await stopServe(serve);
    await collector.shutdown();
  }
  lags.sort((a, b) => a - b);
  const q = (p: number) =>
    lags[Math.min(lags.length - 1, Math.floor(p * lags.length))];
  const p99 = q(0.99);
  return [
    {
      name: `stream lag p50 at 1,000 events/s (${
        lags.length.toLocaleString("en-US")
      } spans)`,
      value: `${q(0.5).toFixed(1)} ms`,
    },
    {
      name: "stream lag p99 at 1,000 events/s (ack → span at the collector)",
      value: `${p99.toFixed(1)} ms`,
    },
    { name: "stream lag max", value: `${lags[lags.length - 1].toFixed(1)} ms` },
  ];
}

if (import.meta.main) await exportBench();
