/**
 * OTLP against the official OpenTelemetry code: what harness encodes as
 * protobuf is decoded with the classes generated from opentelemetry-proto
 * (shipped in `@opentelemetry/otlp-transformer` 0.210.0, the last release
 * that carries them), and traces produced by the official JS SDK
 * (`@opentelemetry/sdk-trace-base`, in-memory exporter, GenAI names from
 * `@opentelemetry/semantic-conventions`, OpenInference names from
 * `@arizeai/openinference-semantic-conventions`) are imported.
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { Buffer } from "node:buffer";
import { HarnessStore } from "../../lib/store/mod.ts";
import {
  DESK_EFFECTS,
  generateDeskEpisodes,
} from "../../examples/order_desk/order_desk.ts";
import { loadEpisodes } from "../../lib/lineage/episodes.ts";
import { compileBehavior } from "../../lib/compiler/compile_behavior.ts";
import {
  captureToOtlp,
  convertOtlp,
  decodeOtlpProtobuf,
  encodeOtlpProtobuf,
} from "../../lib/otel/mod.ts";
import { tempDir } from "../_helpers.ts";
import { calls, eventsOf } from "./_calls.ts";
import proto from "@opentelemetry/otlp-transformer/build/src/generated/root.js";
import {
  JsonTraceSerializer,
  ProtobufTraceSerializer,
} from "@opentelemetry/otlp-transformer";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import {
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_CALL_RESULT,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  GEN_AI_OPERATION_NAME_VALUE_CHAT,
  GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
  GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
} from "@opentelemetry/semantic-conventions/incubating";
import {
  OpenInferenceSpanKind,
  SemanticConventions as OI,
} from "@arizeai/openinference-semantic-conventions";
import { ROOT_CONTEXT, SpanStatusCode, trace } from "@opentelemetry/api";

const ExportTraceServiceRequest =
  // deno-lint-ignore no-explicit-any
  (proto as any).opentelemetry.proto.collector.trace.v1
    .ExportTraceServiceRequest;

/** The official decoder's object, in the OTLP JSON mapping (hex ids). */
function officialToJson(bytes: Uint8Array): unknown {
  const message = ExportTraceServiceRequest.decode(bytes);
  const obj = ExportTraceServiceRequest.toObject(message, {
    longs: String,
    enums: Number,
    bytes: String,
    defaults: false,
    arrays: true,
  });
  const hex = (b64: string) => Buffer.from(b64, "base64").toString("hex");
  for (const rs of obj.resourceSpans) {
    for (const ss of rs.scopeSpans) {
      for (const s of ss.spans) {
        s.traceId = hex(s.traceId);
        s.spanId = hex(s.spanId);
        if (s.parentSpanId) s.parentSpanId = hex(s.parentSpanId);
      }
    }
  }
  return obj;
}

Deno.test("OTLP protobuf: decoded with the official opentelemetry-proto classes, re-encoded byte for byte, imported back to the same calls and compiled IR", async () => {
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path);
  generateDeskEpisodes(store.sink("desk"), "desk", 30);
  const original = await eventsOf(store, "desk");
  const traces = captureToOtlp("desk", original);
  const bytes = encodeOtlpProtobuf(traces);

  // The official classes read it, and write the very same bytes.
  const message = ExportTraceServiceRequest.decode(bytes);
  assertEquals(
    ExportTraceServiceRequest.verify(message),
    null,
    "the official verifier accepts the message",
  );
  const again: Uint8Array = ExportTraceServiceRequest.encode(message).finish();
  assertEquals(Buffer.from(again).equals(Buffer.from(bytes)), true);
  const spans = message.resourceSpans[0].scopeSpans[0].spans;
  assertEquals(
    spans.length,
    traces.resourceSpans[0].scopeSpans[0].spans.length,
  );
  const tool = spans.find((s: { name: string }) =>
    s.name.startsWith("execute_tool ")
  );
  const keys = tool.attributes.map((a: { key: string }) => a.key);
  for (
    const k of ["gen_ai.tool.name", "gen_ai.tool.call.id", "harness.event_hash"]
  ) {
    assertOk(keys.includes(k), `${k} on the decoded tool span`);
  }
  assertEquals(tool.traceId.length, 16);
  assertEquals(tool.spanId.length, 8);

  // Our own decoder agrees with our encoder.
  assertEquals(decodeOtlpProtobuf(bytes), traces);

  // Official decode → JSON mapping → import: same calls, same IR.
  const viaOfficial = JSON.stringify(officialToJson(bytes));
  const fromJson = convertOtlp(viaOfficial, { captureId: "back_json" });
  store.sink("back_json").emitMany(fromJson.episodes.flatMap((e) => e.events));
  const fromPb = convertOtlp(bytes, { captureId: "back_pb" });
  store.sink("back_pb").emitMany(fromPb.episodes.flatMap((e) => e.events));
  const want = calls(original);
  assertEquals(calls(await eventsOf(store, "back_json")), want);
  assertEquals(calls(await eventsOf(store, "back_pb")), want);
  const compile = async (id: string) =>
    compileBehavior(await loadEpisodes(store, id), {
      name: "desk",
      effects: DESK_EFFECTS,
    }).package.ir;
  const ir = await compile("desk");
  assertEquals(await compile("back_json"), ir);
  assertEquals(await compile("back_pb"), ir);
});

/** Spans of one agent run recorded with the official SDK. */
function recordWithSdk() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer("agent-under-test", "1.0.0");
  let t = 1_750_000_000_000;
  const at = () => new Date(t += 10);
  const root = tracer.startSpan("invoke_agent support", {
    startTime: at(),
    attributes: {
      [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
      [ATTR_GEN_AI_CONVERSATION_ID]: "conv-1",
    },
  });
  // No global context manager: children name their parent explicitly.
  const inRoot = trace.setSpan(ROOT_CONTEXT, root);
  {
    const chat = tracer.startSpan(`chat gpt-x`, {
      startTime: at(),
      attributes: {
        [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_CHAT,
        [ATTR_GEN_AI_REQUEST_MODEL]: "gpt-x",
        [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: 321,
        [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: 12,
      },
    }, inRoot);
    chat.end(at());
    const lookup = tracer.startSpan("execute_tool get_order", {
      startTime: at(),
      attributes: {
        [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
        [ATTR_GEN_AI_TOOL_NAME]: "get_order",
        [ATTR_GEN_AI_TOOL_CALL_ID]: "call_1",
        [ATTR_GEN_AI_TOOL_CALL_ARGUMENTS]: '{"order_id":"O-1001"}',
        [ATTR_GEN_AI_TOOL_CALL_RESULT]:
          '{"order_id":"O-1001","status":"delivered","item":"I-9"}',
      },
    }, inRoot);
    lookup.end(at());
    const refund = tracer.startSpan("execute_tool refund", {
      startTime: at(),
      attributes: {
        [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
        [ATTR_GEN_AI_TOOL_NAME]: "refund",
        [ATTR_GEN_AI_TOOL_CALL_ID]: "call_2",
        [ATTR_GEN_AI_TOOL_CALL_ARGUMENTS]: '{"order_id":"O-1001","item":"I-9"}',
      },
    }, inRoot);
    refund.setStatus({ code: SpanStatusCode.ERROR, message: "over limit" });
    refund.end(at());
    // An OpenInference-instrumented tool in the same run.
    const search = tracer.startSpan("search_docs", {
      startTime: at(),
      attributes: {
        [OI.OPENINFERENCE_SPAN_KIND]: OpenInferenceSpanKind.TOOL,
        [OI.TOOL_NAME]: "search_docs",
        [OI.INPUT_VALUE]: '{"query":"refund policy"}',
        [OI.OUTPUT_VALUE]: '{"hits":["D-1"]}',
      },
    }, inRoot);
    search.end(at());
    root.end(at());
  }
  return exporter.getFinishedSpans();
}

Deno.test("OTLP import of traces made by the official JS SDK (GenAI and OpenInference names), serialized as OTLP JSON and protobuf by the official serializers", async () => {
  const spans = recordWithSdk();
  assertEquals(spans.length, 5);
  const json: Uint8Array = JsonTraceSerializer.serializeRequest(spans)!;
  const pb: Uint8Array = ProtobufTraceSerializer.serializeRequest(spans)!;
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path);
  for (const [id, body] of [["sdk_json", json], ["sdk_pb", pb]] as const) {
    const { episodes } = convertOtlp(body, { captureId: id });
    assertEquals(episodes.length, 1, `${id}: one trace, one episode`);
    store.sink(id).emitMany(episodes[0].events);
  }
  const a = await eventsOf(store, "sdk_json");
  const b = await eventsOf(store, "sdk_pb");
  assertEquals(calls(b), calls(a));
  assertEquals(
    calls(a).map((c) => [c.tool, c.kind, c.arguments, c.result, c.error]),
    [
      [
        "get_order",
        "tool.call.completed",
        { order_id: "O-1001" },
        { order_id: "O-1001", status: "delivered", item: "I-9" },
        null,
      ],
      [
        "refund",
        "tool.call.failed",
        { order_id: "O-1001", item: "I-9" },
        null,
        "over limit",
      ],
      [
        "search_docs",
        "tool.call.completed",
        { query: "refund policy" },
        { hits: ["D-1"] },
        null,
      ],
    ],
  );
  const model = a.find((e) => e.kind === "model.responded")!;
  const usage = (model.payload.response as { usage: Record<string, number> })
    .usage;
  assertEquals([usage.input_tokens, usage.output_tokens], [321, 12]);
  assertEquals(a[0].episode_id, b[0].episode_id);
});
