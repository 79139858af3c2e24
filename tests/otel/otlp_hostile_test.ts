/**
 * Hostile OTLP requests on `POST /v1/traces` (issue 35, item 3): one
 * request of 60,000 spans held every route for 14 s, one span of 500,000
 * attributes took 7.4 s. The intake caps spans and attributes per request
 * (the rest refused in the OTLP partial success, naming the cap) and works
 * in slices, so `/health` answers meanwhile. Also: a finished capture is
 * 409 here as on `/ingest`. How fast (`/health` under 100 ms, the wide span
 * refused within 2 s) is measured in `deno task bench reliability`, not
 * asserted here: a timed test fails under a loaded machine, not a slow
 * server. Here: `/health` is answered many times before the request is
 * (a server that held every route while recording answers it once).
 */
import { assertEquals, assertMatch, assertOk } from "../_assert.ts";
import { join } from "node:path";
import { tempDir } from "../_helpers.ts";
import { startServer } from "../_server.ts";
import {
  maximalOtlpRequest,
  otlpStall,
  partialSuccessOf,
} from "../../bench/_otlp_hostile.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { createOtlpIntake } from "../../lib/ingest/otlp_intake.ts";
import type { IngestRequest } from "../../lib/ingest/http1/mod.ts";
import { encodeOtlpProtobuf } from "../../lib/otel/protobuf_encode.ts";
import type { OtlpSpan, OtlpTraces } from "../../lib/otel/otlp_types.ts";
import { eventsOf } from "./_calls.ts";

const hex = (n: number, digits: number) =>
  (n + 1).toString(16).padStart(digits, "0");

/** A tool span with `attributes` attributes (two of them GenAI's). */
function span(i: number, attributes: number): OtlpSpan {
  const list = [
    { key: "gen_ai.operation.name", value: { stringValue: "execute_tool" } },
    { key: "gen_ai.tool.name", value: { stringValue: "lookup" } },
  ];
  while (list.length < attributes) {
    list.push({ key: "a", value: { stringValue: "" } });
  }
  return {
    traceId: hex(i, 32),
    spanId: hex(i, 16),
    name: "execute_tool lookup",
    kind: 1,
    startTimeUnixNano: "1700000000000000000",
    endTimeUnixNano: "1700000001000000000",
    attributes: list.slice(0, attributes),
    status: { code: 1 },
  };
}

function request(spans: OtlpSpan[]): OtlpTraces {
  return {
    resourceSpans: [{
      resource: { attributes: [] },
      scopeSpans: [{ scope: { name: "t", version: "1" }, spans }],
    }],
  };
}

/** Assert what a stall run found: answers in time, the cap named. */
function assertBounded(r: Awaited<ReturnType<typeof otlpStall>>): void {
  assertOk(r.bytes < 8 * 1024 * 1024, `${r.bytes} bytes`);
  assertEquals(r.status, 200);
  assertEquals(r.rejected, 100);
  assertMatch(r.message, /100 past the cap of 10000 spans per request/);
  assertEquals(r.stored_spans, 10_000);
  // /health was asked one after the other until the request was answered:
  // each of these answers came while the request was being recorded.
  assertOk(
    r.health_ms.length >= 10,
    `/health answered only ${r.health_ms.length} times during ${r.ms} ms of recording`,
  );
}

Deno.test("POST /v1/traces: while a maximal protobuf request (10,000 spans at the caps, 100 past them) is recorded, /health keeps answering (10 times or more before it); the 100 are refused in the partial success, naming the cap", async () => {
  await using dir = await tempDir();
  assertBounded(await otlpStall(join(dir.path, "store")));
});

Deno.test("POST /v1/traces: the same with a maximal OTLP JSON request (10,100 spans in 7.8 MB)", async () => {
  await using dir = await tempDir();
  assertBounded(
    await otlpStall(join(dir.path, "store"), { json: true, attributes: 8 }),
  );
});

Deno.test("POST /v1/traces: a span of 500,000 attributes is refused, naming the per-span cap; the span beside it is stored", async () => {
  await using srv = await startServer();
  const body = encodeOtlpProtobuf(request([span(0, 500_000), span(1, 3)]));
  assertOk(body.length < 8 * 1024 * 1024, `${body.length} bytes`);
  const res = await fetch(`${srv.url}/v1/traces`, {
    method: "POST",
    headers: {
      "content-type": "application/x-protobuf",
      "x-harness-capture": "wide",
    },
    body,
  });
  const answer = partialSuccessOf(new Uint8Array(await res.arrayBuffer()));
  assertEquals(res.status, 200);
  assertEquals(res.headers.get("content-type"), "application/x-protobuf");
  assertEquals(answer.rejected, 1);
  assertMatch(
    answer.message,
    /^1 span refused: 1 with more than 1024 attributes \(the cap per span/,
  );
  const kinds = (await eventsOf(srv.store, "wide")).map((e) => e.kind);
  assertEquals(kinds.filter((k) => k === "tool.call.started").length, 1);
});

Deno.test("createOtlpIntake(): spans past the caps (per request, per span, attributes per request) are refused the same way from JSON and protobuf, counted and named; the rest stored", async () => {
  // Attributes: 8, 8, 12 (over 10 on one span), 8 (24 in all), 8 (32: over
  // 30, so it and what follows are cut), 2, then two past 6 spans.
  const spans = [8, 8, 12, 8, 8, 2, 1, 1].map((n, i) => span(i, n));
  const message =
    "5 spans refused: 1 with more than 10 attributes (the cap per span; events and array elements count); 2 past the cap of 30 attributes per request; 2 past the cap of 6 spans per request";
  for (const protobuf of [false, true]) {
    await using dir = await tempDir();
    using store = new HarnessStore(dir.path);
    const intake = createOtlpIntake(store, {
      maxBodyBytes: 1 << 20,
      limits: { maxSpans: 6, maxAttributes: 30, maxSpanAttributes: 10 },
    });
    const bytes = protobuf
      ? encodeOtlpProtobuf(request(spans))
      : new TextEncoder().encode(JSON.stringify(request(spans)));
    const req: IngestRequest & { bytes(limit: number): Promise<Uint8Array> } = {
      method: "POST",
      target: "/v1/traces",
      header: (name) =>
        name === "content-type"
          ? (protobuf ? "application/x-protobuf" : "application/json")
          : name === "x-harness-capture"
          ? "capped"
          : null,
      text: () => Promise.resolve(new TextDecoder().decode(bytes)),
      bytes: () => Promise.resolve(bytes),
      discard: () => Promise.resolve(),
    };
    const a = await intake.answer(req);
    assertEquals(a.status, 200);
    const answer = protobuf ? partialSuccessOf(a.raw!) : {
      rejected: Number(JSON.parse(a.body!).partialSuccess.rejectedSpans),
      message: JSON.parse(a.body!).partialSuccess.errorMessage,
    };
    assertEquals(answer, { rejected: 5, message });
    assertEquals(intake.stats.otlp_spans, 3);
    assertEquals(intake.stats.otlp_rejected_spans, 5);
    const started = (await eventsOf(store, "capped"))
      .filter((e) => e.kind === "tool.call.started")
      .map((e) => e.payload.call_id);
    assertEquals(started.length, 3);
  }
});

Deno.test("createOtlpIntake(): requests are worked one at a time in the order they came, so a trace split over two keeps the episode its first request named", async () => {
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path);
  const intake = createOtlpIntake(store, { maxBodyBytes: 8 << 20 });
  const ask = (spans: OtlpSpan[]): IngestRequest => {
    const bytes = encodeOtlpProtobuf(request(spans));
    return {
      method: "POST",
      target: "/v1/traces",
      header: (name) =>
        name === "content-type"
          ? "application/x-protobuf"
          : name === "x-harness-capture"
          ? "order"
          : null,
      text: () => Promise.reject(new Error("bytes only")),
      bytes: () => Promise.resolve(bytes),
      discard: () => Promise.resolve(),
    } as IngestRequest;
  };
  // The first request is long (it gives the event loop turns) and names
  // the conversation of trace 9999 on its last span; the second sends a
  // tool span of that trace without it.
  const named = span(9999, 2);
  named.attributes.push({
    key: "gen_ai.conversation.id",
    value: { stringValue: "conv-9999" },
  });
  const first = [...Array.from({ length: 3000 }, (_, i) => span(i, 6)), named];
  const later = { ...span(9999, 2), spanId: hex(123_456, 16) };
  const [a, b] = await Promise.all([
    intake.answer(ask(first)),
    intake.answer(ask([later])),
  ]);
  assertEquals([a.status, b.status], [200, 200]);
  const events = await eventsOf(store, "order");
  const unnamed = `trace_${hex(9999, 32)}`;
  const of9999 = events.filter((e) =>
    e.episode_id === "conv-9999" || e.episode_id === unnamed
  );
  assertEquals(
    new Set(of9999.map((e) => e.episode_id)),
    new Set(["conv-9999"]),
  );
  assertEquals(
    of9999.filter((e) => e.kind === "tool.call.started").length,
    2,
  );
});

Deno.test("POST /v1/traces answers as /ingest does: 409 for a finished capture, 422 for a bad capture id, 400 for a body that is not OTLP (corrupt gzip)", async () => {
  const { CaptureCoordinator } = await import("../../lib/control/mod.ts");
  await using srv = await startServer();
  const coord = new CaptureCoordinator(srv.store);
  coord.startCapture({ id: "done", activate: false });
  coord.finishCapture("done");
  const before = srv.store.getCapture("done")!.event_count;
  const post = async (
    capture: string,
    body: Uint8Array,
    headers: Record<string, string> = {},
  ) => {
    const res = await fetch(`${srv.url}/v1/traces`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-harness-capture": capture,
        ...headers,
      },
      body: body as Uint8Array<ArrayBuffer>,
    });
    return { status: res.status, error: String((await res.json()).error) };
  };
  const json = new TextEncoder().encode(
    JSON.stringify(request([span(0, 2)])),
  );
  const finished = await post("done", json);
  assertEquals(finished.status, 409);
  assertMatch(finished.error, /Capture "done" is finished/);
  const pb = await post("done", encodeOtlpProtobuf(request([span(0, 2)])), {
    "content-type": "application/x-protobuf",
  });
  assertEquals(pb.status, 409);
  assertEquals(srv.store.getCapture("done")!.event_count, before);
  assertEquals((await post("../x", json)).status, 422);
  const corrupt = await post("c", new Uint8Array([0x1f, 0x8b, 1, 2, 3]), {
    "content-encoding": "gzip",
  });
  assertEquals(corrupt.status, 400);
  assertMatch(corrupt.error, /^Not an OTLP traces request \(.*gzip/);
  // The intake still takes a good request.
  const ok = await fetch(`${srv.url}/v1/traces`, {
    method: "POST",
    headers: { "content-type": "application/x-protobuf" },
    body: maximalOtlpRequest({ spans: 3 }) as Uint8Array<ArrayBuffer>,
  });
  assertEquals(ok.status, 200);
  assertEquals((await ok.arrayBuffer()).byteLength, 0);
});
