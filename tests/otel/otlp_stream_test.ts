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

/** A local OTLP/HTTP receiver that keeps what it gets. */
function receiver(answer: () => number | Promise<number> = () => 200) {
  const spans = new Map<string, OtlpSpan>();
  let requests = 0;
  const types = new Set<string>();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      const type = req.headers.get("content-type") ?? "";
      const body: OtlpTraces = type === "application/x-protobuf"
        ? decodeOtlpProtobuf(new Uint8Array(await req.arrayBuffer()))
        : await req.json();
      const status = await answer();
      if (status !== 200) return new Response("no", { status });
      requests++;
      types.add(type);
      for (const s of body.resourceSpans[0].scopeSpans[0].spans) {
        assertOk(!spans.has(s.spanId), `span ${s.spanId} sent twice`);
        spans.set(s.spanId, s);
      }
      return Response.json({});
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}/v1/traces`,
    spans,
    types,
    get requests() {
      return requests;
    },
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
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
  while (!line) await new Promise((r) => setTimeout(r, 10));
  const url = line.match(/on (http:\/\/[^ ]+)/)![1];
  return { url, lines, stop: async () => (stop(), await done) };
}

Deno.test("serve --export-otlp streams every stored event as the same spans a whole-capture export gives, as protobuf; /health counts them", async () => {
  await using rx = receiver();
  await using dir = await tempDir();
  const root = join(dir.path, "store");
  const events = await deskEvents(25);
  const s = await startServe(root, {
    exportOtlp: rx.url,
    exportOtlpProtocol: "http/protobuf",
    exportOtlpIntervalMs: 30,
  });
  for (let i = 0; i < events.length; i += 40) {
    const res = await fetch(`${s.url}/ingest`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(events.slice(i, i + 40).map(unsealed)),
    });
    assertEquals(res.status, 200, await res.text());
  }
  // Spans arrive while serving (not only at shutdown).
  for (let i = 0; i < 200 && rx.spans.size === 0; i++) {
    await new Promise((r) => setTimeout(r, 20));
  }
  assertOk(rx.spans.size > 0, "spans arrive while the server runs");
  const health = await (await fetch(`${s.url}/health`)).json();
  assertEquals(health.otlp_export.endpoint, rx.url);
  assertEquals(health.otlp_export.dropped_events, 0);
  await s.stop();
  assertEquals([...rx.types], ["application/x-protobuf"]);

  // The stream equals the batch export of what was stored.
  using store = new HarnessStore(root);
  const stored: TraceEvent[] = [];
  for await (const ev of store.readEvents("desk")) stored.push(ev);
  assertEquals(stored.length, events.length);
  const batch = captureToOtlp("desk", stored).resourceSpans[0].scopeSpans[0]
    .spans;
  assertEquals(rx.spans.size, batch.length);
  for (const span of batch) {
    assertEquals(rx.spans.get(span.spanId), span, span.name);
  }
  assertOk(
    s.lines.some((l) =>
      /OTLP export to .*: \d+ spans sent, 0 failed, 0 events dropped/.test(l)
    ),
    s.lines.join("\n"),
  );
});

Deno.test("a collector that is down never fails an acknowledgement: the export queue stays bounded, drops and failures are counted on /health", async () => {
  let down = true;
  await using rx = receiver(() => down ? 503 : 200);
  await using dir = await tempDir();
  const root = join(dir.path, "store");
  const events = await deskEvents(20);
  const s = await startServe(root, {
    exportOtlp: rx.url,
    exportOtlpQueue: 50,
    exportOtlpIntervalMs: 30,
  });
  for (let i = 0; i < events.length; i += 10) {
    const res = await fetch(`${s.url}/ingest`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(events.slice(i, i + 10).map(unsealed)),
    });
    assertEquals(res.status, 200);
    await res.body?.cancel();
  }
  const health = await (await fetch(`${s.url}/health`)).json();
  const st = health.otlp_export;
  assertOk(st.queued <= 50, `queue bounded (${st.queued})`);
  assertOk(st.dropped_events > 0, "events beyond the queue are dropped");
  assertEquals(health.stats.events, events.length, "all stored");
  // Wait for a failed round (retries used up against 503s).
  for (let i = 0; i < 300; i++) {
    const h = await (await fetch(`${s.url}/health`)).json();
    if (h.otlp_export.failed_spans > 0) {
      assertOk(/503/.test(h.otlp_export.last_error), h.otlp_export.last_error);
      break;
    }
    assertOk(i < 299, "a failure is reported");
    await new Promise((r) => setTimeout(r, 20));
  }
  down = false;
  await s.stop();
  // Everything is in the spool whatever the export did.
  using store = new HarnessStore(root);
  let n = 0;
  for await (const _ of store.readEvents("desk")) n++;
  assertEquals(n, events.length);
  assertOk(rx.spans.size > 0, "once the collector is back, spans go through");
});

Deno.test("OtlpStreamer: offer never blocks or throws; close sends roots and open calls as incomplete", async () => {
  await using rx = receiver();
  const events = await deskEvents(3);
  const st = new OtlpStreamer(rx.url, { maxQueue: 1000, intervalMs: 10_000 });
  st.start();
  // Leave the last call of the capture open: drop its completion.
  const lastEnd = events.findLastIndex((e) => e.kind === "tool.call.completed");
  for (const [i, ev] of events.entries()) if (i !== lastEnd) st.offer(ev);
  assertEquals(st.status.queued, events.length - 1);
  await st.close();
  assertEquals(st.status.queued, 0);
  const open = rx.spans.get(
    captureToOtlp("desk", events.filter((_, i) => i !== lastEnd))
      .resourceSpans[0].scopeSpans[0].spans.find((s) =>
        s.attributes.some((a) => a.key === "harness.incomplete")
      )!.spanId,
  );
  assertOk(open, "the open call is sent, marked incomplete");
  const roots = [...rx.spans.values()].filter((s) => !s.parentSpanId);
  assertEquals(roots.length, 3);
  st.offer(events[0]);
  assertEquals(st.status.dropped_events, 1, "after close, offers are counted");
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
