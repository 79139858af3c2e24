/**
 * `POST /v1/traces` against an agent built with the official OpenTelemetry
 * JS SDK (`@opentelemetry/sdk-trace-base`) and its OTLP/HTTP protobuf
 * exporter (`@opentelemetry/exporter-trace-otlp-proto`), over a real
 * loopback server running the ingest handler.
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { createIngestHandler } from "../../lib/ingest/handler.ts";
import { buildLineageReport } from "../../lib/control/lineage_report.ts";
import { tempDir } from "../_helpers.ts";
import { startServer } from "../_server.ts";
import { eventsOf } from "./_calls.ts";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import {
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_INPUT_MESSAGES,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_OUTPUT_MESSAGES,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_CALL_RESULT,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
} from "@opentelemetry/semantic-conventions/incubating";
import { ROOT_CONTEXT, SpanStatusCode, trace } from "@opentelemetry/api";

/**
 * The official OTLP/HTTP protobuf exporter. Until deno.json names it, it is
 * loaded by its full specifier: the release matching otlp-transformer
 * 0.210.0. (A static import pulls a newer `@types/node` into type checking,
 * which clashes with tests/_assert.ts.)
 */
const EXPORTER = "npm:@opentelemetry/exporter-trace-otlp-proto@0.210.0";

const USER = "Please cancel order O-4471 for me, it arrived broken.";

/** The agent: one turn, a chat that calls two tools, one of them failing. */
function runAgent(provider: BasicTracerProvider): void {
  const tracer = provider.getTracer("shop-agent", "1.0.0");
  const root = tracer.startSpan("invoke_agent shop", {
    attributes: {
      [ATTR_GEN_AI_OPERATION_NAME]: "invoke_agent",
      [ATTR_GEN_AI_CONVERSATION_ID]: "conv-1",
      [ATTR_GEN_AI_INPUT_MESSAGES]: JSON.stringify([
        { role: "user", parts: [{ type: "text", content: USER }] },
      ]),
    },
  });
  const ctx = trace.setSpan(ROOT_CONTEXT, root);
  const chat = tracer.startSpan("chat gpt-x", {
    kind: 2,
    attributes: {
      [ATTR_GEN_AI_OPERATION_NAME]: "chat",
      [ATTR_GEN_AI_CONVERSATION_ID]: "conv-1",
      [ATTR_GEN_AI_PROVIDER_NAME]: "openai",
      [ATTR_GEN_AI_REQUEST_MODEL]: "gpt-x",
      [ATTR_GEN_AI_INPUT_MESSAGES]: JSON.stringify([
        { role: "system", parts: [{ type: "text", content: "Be brief." }] },
        { role: "user", parts: [{ type: "text", content: USER }] },
      ]),
      [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: 321,
      [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: 12,
    },
  }, ctx);
  chat.end();
  const lookup = tracer.startSpan("execute_tool get_order", {
    attributes: {
      [ATTR_GEN_AI_OPERATION_NAME]: "execute_tool",
      [ATTR_GEN_AI_TOOL_NAME]: "get_order",
      [ATTR_GEN_AI_TOOL_CALL_ID]: "call_1",
      [ATTR_GEN_AI_TOOL_CALL_ARGUMENTS]: JSON.stringify({ order_id: "O-4471" }),
      [ATTR_GEN_AI_TOOL_CALL_RESULT]: JSON.stringify({ status: "delivered" }),
    },
  }, ctx);
  lookup.end();
  const cancel = tracer.startSpan("execute_tool cancel_order", {
    attributes: {
      [ATTR_GEN_AI_OPERATION_NAME]: "execute_tool",
      [ATTR_GEN_AI_TOOL_NAME]: "cancel_order",
      [ATTR_GEN_AI_TOOL_CALL_ARGUMENTS]: JSON.stringify({
        order_id: "O-4471",
        reason: "broken",
      }),
      "error.type": "not_cancellable",
    },
  }, ctx);
  cancel.setStatus({
    code: SpanStatusCode.ERROR,
    message: "Delivered orders cannot be cancelled",
  });
  cancel.end();
  root.setAttribute(
    ATTR_GEN_AI_OUTPUT_MESSAGES,
    JSON.stringify([{
      role: "assistant",
      parts: [{ type: "text", content: "That order cannot be cancelled." }],
      finish_reason: "stop",
    }]),
  );
  root.end();
}

Deno.test("POST /v1/traces on the real ingest server takes an official OTLP protobuf exporter's spans (gzip) into the capture; a second send stores nothing more", async () => {
  await using srv = await startServer();
  const store = srv.store;
  const { OTLPTraceExporter } = await import(EXPORTER);
  const exporter = new OTLPTraceExporter({
    url: `${srv.url}/v1/traces`,
    headers: { "x-harness-capture": "agent" },
    compression: "gzip",
  });
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    spanProcessors: [
      new SimpleSpanProcessor(exporter),
      new SimpleSpanProcessor(memory),
    ],
  });
  runAgent(provider);
  await provider.forceFlush();
  const events = await eventsOf(store, "agent");
  const kinds = events.map((e) => e.kind);
  assertEquals(kinds.filter((k) => k === "episode.started").length, 1);
  assertEquals(kinds.filter((k) => k === "episode.finished").length, 1);
  const user = events.filter((e) =>
    e.kind === "message" && e.payload.role === "user"
  );
  assertEquals(user.map((e) => e.payload.text), [USER]);
  const assistant = events.find((e) =>
    e.kind === "message" && e.payload.role === "assistant"
  );
  assertEquals(assistant?.payload.text, "That order cannot be cancelled.");
  const done = events.find((e) => e.kind === "tool.call.completed")!;
  assertEquals(done.payload.arguments, { order_id: "O-4471" });
  assertEquals(done.payload.result, { status: "delivered" });
  const failed = events.find((e) => e.kind === "tool.call.failed")!;
  assertEquals(
    (failed.payload.error as { message: string }).message,
    "Delivered orders cannot be cancelled",
  );
  const model = events.find((e) => e.kind === "model.responded")!;
  assertEquals(
    (model.payload.response as { usage: unknown }).usage,
    { input_tokens: 321, output_tokens: 12 },
  );
  assertOk(events.every((e) => e.episode_id === "conv-1"));
  // The user's words come before the calls that use them.
  assertOk(
    events.indexOf(user[0]) <
      events.findIndex((e) => e.kind === "tool.call.started"),
  );
  const report = await buildLineageReport(store, "agent");
  const arg = report.episodes[0].steps[0].arguments.find((a) =>
    a.arg === "order_id"
  );
  assertEquals(arg?.kind, "user_input");

  // The same spans again (a retried export), by the same exporter: once.
  const result = await new Promise<{ code: number }>((r) =>
    exporter.export(memory.getFinishedSpans(), r)
  );
  assertEquals(result.code, 0);
  assertEquals((await eventsOf(store, "agent")).length, events.length);
  await provider.shutdown();
});

Deno.test("POST /v1/traces refuses spans with invalid ids in a partial success and stores the rest, once", async () => {
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path);
  const { handler } = createIngestHandler(store);
  await using server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    handler,
  );
  const span = (traceId: string, spanId: string) => ({
    traceId,
    spanId,
    name: "execute_tool t",
    kind: 1,
    startTimeUnixNano: "1700000000000000000",
    endTimeUnixNano: "1700000001000000000",
    attributes: [
      { key: "gen_ai.operation.name", value: { stringValue: "execute_tool" } },
      { key: "gen_ai.tool.name", value: { stringValue: "t" } },
    ],
    status: { code: 1 },
  });
  const body = JSON.stringify({
    resourceSpans: [{
      resource: {
        attributes: [{
          key: "harness.capture_id",
          value: { stringValue: "from_resource" },
        }],
      },
      scopeSpans: [{
        scope: { name: "x", version: "1" },
        spans: [
          span("zz", "1"),
          span("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"),
          span("0af7651916cd43dd8448eb211c80319c", "xyz"),
        ],
      }],
    }],
  });
  const post = () =>
    fetch(`http://127.0.0.1:${server.addr.port}/v1/traces`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
  const res = await post();
  assertEquals(res.status, 200);
  const answer = await res.json();
  assertEquals(answer.partialSuccess.rejectedSpans, "2");
  assertOk(answer.partialSuccess.errorMessage.includes("32 hex"));
  const stored = await eventsOf(store, "from_resource");
  assertEquals(
    stored.map((e) => e.kind),
    [
      "episode.started",
      "tool.call.started",
      "tool.call.completed",
      // A span without a parent is its trace's root: the episode is over.
      "episode.finished",
    ],
  );
  assertEquals((await post()).status, 200);
  assertEquals((await eventsOf(store, "from_resource")).length, stored.length);
  const wrongType = await fetch(
    `http://127.0.0.1:${server.addr.port}/v1/traces`,
    { method: "POST", headers: { "content-type": "text/plain" }, body },
  );
  assertEquals(wrongType.status, 415);
  await wrongType.body?.cancel();
  const origin = await fetch(
    `http://127.0.0.1:${server.addr.port}/v1/traces`,
    {
      method: "POST",
      headers: { "content-type": "application/json", origin: "http://x" },
      body,
    },
  );
  assertEquals(origin.status, 403);
  await origin.body?.cancel();
});
