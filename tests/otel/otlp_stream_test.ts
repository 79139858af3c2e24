import { assertEquals, assertOk, assertThrows } from "../_assert.ts";
import { join } from "node:path";
import { HarnessStore } from "../../lib/store/mod.ts";
import { generateDeskEpisodes } from "../../examples/order_desk/order_desk.ts";
import {
  captureToOtlp,
  decodeOtlpProtobuf,
  type OtlpSpan,
  type OtlpTraces,
} from "../../lib/otel/mod.ts";
import { OtlpStreamer } from "../../lib/otel/stream.ts";
import { checkExportUrl, serve } from "../../lib/cli/cmd_serve.ts";
import { UsageError } from "../../lib/cli/io.ts";
import type { TraceEvent } from "../../lib/trace/mod.ts";
import { tempDir } from "../_helpers.ts";
import { waitFor } from "../_wait.ts";

/** Desk events as a client would send them (unsealed). */
async function deskEvents(episodes: number): Promise<TraceEvent[]> {
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path);
  generateDeskEpisodes(store.sink("desk"), "desk", episodes);
  const out: TraceEvent[] = [];
  for await (const ev of store.readEvents("desk")) out.push(ev);
  return out;
}

function unsealed(ev: TraceEvent) {
  const { sequence: _s, prev_event_hash: _p, event_hash: _h, ...rest } = ev;
  return rest;
}

/**
 * A local OTLP/HTTP receiver that keeps the last version of each span (a
 * span may come again: delivery is at least once). `stop()` takes it off
 * its port (connections refused), `start()` puts it back on the same one.
 */
async function receiver() {
  const spans = new Map<string, OtlpSpan>();
  const types = new Set<string>();
  let repeats = 0;
  let port = 0;
  let server: Deno.HttpServer | null = null;
  const start = () => {
    server = Deno.serve(
      { hostname: "127.0.0.1", port, onListen: () => {} },
      async (req) => {
        const type = req.headers.get("content-type") ?? "";
        const body: OtlpTraces = type === "application/x-protobuf"
          ? decodeOtlpProtobuf(new Uint8Array(await req.arrayBuffer()))
          : await req.json();
        types.add(type);
        for (const s of body.resourceSpans[0].scopeSpans[0].spans) {
          if (spans.has(s.spanId)) repeats++;
          spans.set(s.spanId, s);
        }
        return Response.json({});
      },
    );
    port = (server.addr as Deno.NetAddr).port;
  };
  start();
  const stop = async () => {
    await server?.shutdown();
    server = null;
  };
  await Promise.resolve();
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    spans,
    types,
    get repeats() {
      return repeats;
    },
    start,
    stop,
    [Symbol.asyncDispose]: stop,
  };
}

async function health(url: string) {
  const res = await fetch(`${url}/health`);
  return await res.json();
}

async function post(url: string, events: TraceEvent[], size = 40) {
  for (let i = 0; i < events.length; i += size) {
    const res = await fetch(`${url}/ingest`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(events.slice(i, i + size).map(unsealed)),
    });
    assertEquals(res.status, 200, await res.text());
  }
}

/** The spans a whole-capture export of what the store holds gives. */
async function batchOf(root: string, capture = "desk"): Promise<OtlpSpan[]> {
  using store = new HarnessStore(root);
  const stored: TraceEvent[] = [];
  for await (const ev of store.readEvents(capture)) stored.push(ev);
  return captureToOtlp(capture, stored).resourceSpans[0].scopeSpans[0].spans;
}

/** Every span of the batch export arrived, as the batch export has it. */
function assertDelivered(got: Map<string, OtlpSpan>, batch: OtlpSpan[]) {
  assertEquals(got.size, batch.length, "span count");
  for (const span of batch) assertEquals(got.get(span.spanId), span, span.name);
}

async function startServe(
  root: string,
  options: Record<string, unknown>,
) {
  let line = "";
  let stop!: () => void;
  const stopSignal = new Promise<void>((r) => stop = r);
  const lines: string[] = [];
  const done = serve({
    root,
    host: "127.0.0.1",
    port: 0,
    allowRemote: false,
    noRedact: false,
    stopSignal,
    ...options,
  }, {
    out: (t) => {
      lines.push(t);
      line ||= t;
    },
    err: (t) => lines.push(t),
  });
  await waitFor("the server's start line", () => line);
  const url = line.match(/on (http:\/\/[^ ]+)/)![1];
  return { url, lines, stop: async () => (stop(), await done) };
}

Deno.test("serve --export-otlp streams every stored event as the same spans a whole-capture export gives, invoke_agent roots included, while it runs", async () => {
  await using rx = await receiver();
  await using dir = await tempDir();
  const root = join(dir.path, "store");
  const events = await deskEvents(15);
  const s = await startServe(root, {
    exportOtlp: rx.url,
    exportOtlpProtocol: "http/protobuf",
    exportOtlpIntervalMs: 30,
  });
  await post(s.url, events);
  // What the store holds is read after the stop (the server locks it).
  const batch = captureToOtlp("desk", events).resourceSpans[0].scopeSpans[0]
    .spans;
  const roots = batch.filter((sp) => sp.name.startsWith("invoke_agent"));
  assertEquals(roots.length, 15);
  // Every span, roots of finished episodes included, arrives while serving.
  await waitFor(
    "every span while serving",
    () => rx.spans.size === batch.length,
  );
  // The cursor moves once the collector's answer is read.
  await waitFor(
    "the cursor at the head",
    async () => (await health(s.url)).otlp_export.lag_events === 0,
  );
  const h = await health(s.url);
  assertEquals(h.ok, true);
  assertEquals(h.otlp_export.endpoint, rx.url);
  assertEquals(rx.spans.size, batch.length, "no span beyond the export's");
  await s.stop();
  assertEquals([...rx.types], ["application/x-protobuf"]);
  assertDelivered(rx.spans, await batchOf(root));
  assertOk(
    s.lines.some((l) =>
      /OTLP export to .*: \d+ spans sent, 0 events not yet sent/.test(l)
    ),
    s.lines.join("\n"),
  );
});

Deno.test("serve --export-otlp: after a collector outage every event stored meanwhile is sent; /health shows the lag, the retries and ok: false once stalled", async () => {
  await using rx = await receiver();
  await using dir = await tempDir();
  const root = join(dir.path, "store");
  const events = await deskEvents(40);
  const half = events.findIndex((e, i) =>
    i > events.length / 2 && e.kind === "episode.started"
  );
  const s = await startServe(root, {
    exportOtlp: rx.url,
    exportOtlpIntervalMs: 30,
    exportOtlpStallMs: 300,
  });
  await post(s.url, events.slice(0, half));
  await waitFor(
    "the first half",
    async () => (await health(s.url)).otlp_export.lag_events === 0,
  );
  await rx.stop();
  await post(s.url, events.slice(half));
  const down = await health(s.url);
  assertEquals(down.stats.events, events.length, "all stored");
  await waitFor("stalled on /health", async () => {
    const h = await health(s.url);
    return h.ok === false && h.otlp_export.stalled === true;
  });
  const h = await health(s.url);
  assertOk(h.otlp_export.lag_events > 250, `lag ${h.otlp_export.lag_events}`);
  assertOk(h.otlp_export.retries > 0, "retries counted");
  assertOk(h.otlp_export.last_error, "the failure is shown");
  rx.start();
  await waitFor("caught up after the outage", async () => {
    const h = await health(s.url);
    return h.otlp_export.lag_events === 0 && h.ok === true;
  });
  // Every episode is finished: all spans arrived before the stop.
  const expected = captureToOtlp("desk", events).resourceSpans[0]
    .scopeSpans[0].spans;
  assertEquals(rx.spans.size, expected.length, "nothing missing");
  await s.stop();
  assertDelivered(rx.spans, await batchOf(root));
});

Deno.test("serve --export-otlp: events stored while the collector was down are sent after a server restart", async () => {
  await using rx = await receiver();
  await rx.stop();
  await using dir = await tempDir();
  const root = join(dir.path, "store");
  const events = await deskEvents(20);
  const first = await startServe(root, {
    exportOtlp: rx.url,
    exportOtlpIntervalMs: 30,
  });
  // Half of the last episode only: it is still open at the restart.
  const cut = events.length - 4;
  await post(first.url, events.slice(0, cut));
  await first.stop();
  assertEquals(rx.spans.size, 0);
  // Events before the first span are done (their state is rebuilt by replay).
  assertOk(
    first.lines.some((l) =>
      Number(l.match(/(\d+) events not yet sent/)?.[1]) >= cut - 10
    ),
    first.lines.join("\n"),
  );
  rx.start();
  const second = await startServe(root, {
    exportOtlp: rx.url,
    exportOtlpIntervalMs: 30,
  });
  await waitFor(
    "caught up after the restart",
    async () => (await health(second.url)).otlp_export.lag_events === 0,
  );
  await second.stop();
  // The last episode was open at both stops: the third start rebuilds it
  // from the cursor and sends its root whole once it finishes.
  const third = await startServe(root, {
    exportOtlp: rx.url,
    exportOtlpIntervalMs: 30,
  });
  await post(third.url, events.slice(cut));
  await waitFor(
    "the rest",
    async () => (await health(third.url)).otlp_export.lag_events === 0,
  );
  await third.stop();
  assertDelivered(rx.spans, await batchOf(root));
});

Deno.test("serve --export-otlp: a 20,000-event burst while the collector is down is sent in full, with no more than the buffer's bound of spans in memory", async () => {
  await using rx = await receiver();
  await rx.stop();
  await using dir = await tempDir();
  const root = join(dir.path, "store");
  const events = await deskEvents(1400);
  assertOk(events.length >= 20_000, `${events.length} events`);
  const s = await startServe(root, {
    exportOtlp: rx.url,
    exportOtlpIntervalMs: 30,
  });
  await post(s.url, events.slice(0, 20_000), 500);
  const h = await health(s.url);
  assertEquals(h.stats.events, 20_000);
  assertOk(
    h.otlp_export.lag_events > 19_000,
    `lag ${h.otlp_export.lag_events}`,
  );
  rx.start();
  let peakLag = 0;
  await waitFor("the burst sent", async () => {
    const st = (await health(s.url)).otlp_export;
    peakLag = Math.max(peakLag, st.lag_events);
    // One event finishes at most its episode's root beyond the bound here.
    assertOk(
      st.buffered_spans <= st.buffer_limit + 1,
      `${st.buffered_spans} spans buffered`,
    );
    return st.lag_events === 0;
  }, { limitMs: 120_000 });
  const end = (await health(s.url)).otlp_export;
  assertEquals(end.buffer_limit, 100);
  assertOk(
    end.peak_buffered_spans <= end.buffer_limit + 1,
    `peak ${end.peak_buffered_spans} spans buffered`,
  );
  await s.stop();
  assertDelivered(rx.spans, await batchOf(root));
});

Deno.test("OtlpStreamer: a new collector starts at the stored heads; close sends roots and open calls as incomplete", async () => {
  await using rx = await receiver();
  await using dir = await tempDir();
  const events = await deskEvents(3);
  using store = new HarnessStore(dir.path);
  store.ingest({ ...unsealed(events[0]), capture_id: "before" });
  const st = new OtlpStreamer(store, rx.url, { intervalMs: 10_000 });
  st.start();
  // Leave the last call of the capture open: drop its completion.
  const lastEnd = events.findLastIndex((e) => e.kind === "tool.call.completed");
  const kept = events.filter((_, i) => i !== lastEnd);
  for (const ev of kept) store.ingest(unsealed(ev));
  assertEquals(st.status.lag_events, kept.length);
  await st.close();
  assertEquals(st.status.lag_events, 0);
  const stored: TraceEvent[] = [];
  for await (const ev of store.readEvents("desk")) stored.push(ev);
  const batch = captureToOtlp("desk", stored).resourceSpans[0].scopeSpans[0]
    .spans;
  assertDelivered(rx.spans, batch);
  const open = batch.find((s) =>
    s.attributes.some((a) => a.key === "harness.incomplete")
  );
  assertOk(open && rx.spans.has(open.spanId), "the open call is sent");
  const roots = [...rx.spans.values()].filter((s) => !s.parentSpanId);
  assertEquals(roots.length, 3);
  assertOk(
    [...rx.spans.values()].every((s) =>
      !s.attributes.some((a) =>
        a.key === "harness.capture_id" &&
        JSON.stringify(a.value).includes("before")
      )
    ),
  );
});

Deno.test("--export-otlp: a bad URL or a host this process may not reach is refused before the server starts, saying which flag to add", () => {
  const refused = (url: string) => {
    const err = assertThrows(() => checkExportUrl(url), UsageError);
    return err.message;
  };
  assertOk(/takes a URL/.test(refused("not a url")));
  assertOk(/http\(s\) URL/.test(refused("collector:4318")));
  assertOk(/http\(s\) URL/.test(refused("ftp://127.0.0.1/x")));
  // The tests run with --allow-net=127.0.0.1 only.
  assertOk(
    refused("http://collector.example:4318/v1/traces").includes(
      "--allow-net=127.0.0.1,collector.example:4318",
    ),
  );
  assertEquals(
    checkExportUrl("http://127.0.0.1:4318/v1/traces").host,
    "127.0.0.1:4318",
  );
});
