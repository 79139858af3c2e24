import { assertEquals, assertOk, assertRejects } from "../_assert.ts";
import { join } from "node:path";
import { HarnessStore } from "../../lib/store/mod.ts";
import {
  DESK_EFFECTS,
  generateDeskEpisodes,
} from "../../examples/order_desk/order_desk.ts";
import { loadEpisodes } from "../../lib/lineage/episodes.ts";
import { compileBehavior } from "../../lib/compiler/compile_behavior.ts";
import { buildLineageReport } from "../../lib/control/lineage_report.ts";
import {
  captureToOtlp,
  convertOtlp,
  decodeOtlpProtobuf,
  OtlpSendError,
  type OtlpTraces,
  sendOtlp,
} from "../../lib/otel/mod.ts";
import { main } from "../../ingest.ts";
import { tempDir } from "../_helpers.ts";
import { calls, eventsOf } from "./_calls.ts";

Deno.test("OTLP round trip: export → JSON → import gives the same calls, arguments, results, lineage and compiled IR", async () => {
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path);
  generateDeskEpisodes(store.sink("desk"), "desk", 40);
  const original = await eventsOf(store, "desk");
  const traces = captureToOtlp("desk", original);
  const spans = traces.resourceSpans[0].scopeSpans[0].spans;
  // Same capture, same ids.
  assertEquals(
    JSON.stringify(captureToOtlp("desk", original)),
    JSON.stringify(traces),
  );
  const tool = spans.find((s) => s.name.startsWith("execute_tool "))!;
  const attr = (k: string) => tool.attributes.find((a) => a.key === k)?.value;
  assertEquals(attr("gen_ai.operation.name"), { stringValue: "execute_tool" });
  assertOk(
    /^[0-9a-f]{32}$/.test(tool.traceId) && /^[0-9a-f]{16}$/.test(tool.spanId),
  );
  assertOk(JSON.stringify(attr("harness.event_hash")).includes("sha256:"));

  const text = JSON.stringify(traces);
  const { episodes } = convertOtlp(text, { captureId: "back" });
  store.sink("back").emitMany(episodes.flatMap((e) => e.events));
  const back = await eventsOf(store, "back");
  assertEquals(calls(back), calls(original));

  const [a, b] = [
    await buildLineageReport(store, "desk"),
    await buildLineageReport(store, "back"),
  ];
  const edges = (r: typeof a) =>
    r.episodes.map((e) => ({
      id: e.episode_id,
      success: e.success,
      steps: e.steps.map((s) => s.arguments),
    }));
  assertEquals(edges(b), edges(a));
  assertEquals(b.totals, a.totals);

  const compile = async (id: string) =>
    compileBehavior(await loadEpisodes(store, id), {
      name: "desk",
      effects: DESK_EFFECTS,
    }).package.ir;
  assertEquals(await compile("back"), await compile("desk"));
});

// Over 80 lines: one scenario end to end, its steps and checks in order.
Deno.test("OTLP import: GenAI, OpenInference and OpenLLMetry tool and LLM spans; bad input names where and writes nothing", () => {
  const span = (
    id: string,
    name: string,
    attributes: Record<string, string | number>,
    start: number,
    parent?: string,
  ) => ({
    traceId: "ab".repeat(16),
    spanId: id.padStart(16, "0"),
    ...(parent ? { parentSpanId: parent.padStart(16, "0") } : {}),
    name,
    kind: 1,
    startTimeUnixNano: String(BigInt(1_700_000_000_000 + start) * 1_000_000n),
    endTimeUnixNano: String(
      BigInt(1_700_000_000_000 + start + 5) * 1_000_000n,
    ),
    attributes: Object.entries(attributes).map(([key, v]) => ({
      key,
      value: typeof v === "number"
        ? { intValue: String(v) }
        : { stringValue: v },
    })),
    status: { code: 0 },
  });
  const file = {
    resourceSpans: [{
      resource: { attributes: [] },
      scopeSpans: [{
        scope: { name: "x", version: "1" },
        spans: [
          span("1", "agent", { "openinference.span.kind": "AGENT" }, 0),
          span(
            "2",
            "lookup",
            {
              "openinference.span.kind": "TOOL",
              "tool.name": "get_user",
              "input.value": '{"user_id":"U-1"}',
              "output.value": '{"name":"Ann","order":"O-7"}',
            },
            10,
            "1",
          ),
          span(
            "3",
            "openai.chat",
            {
              "llm.request.type": "chat",
              "gen_ai.request.model": "gpt-x",
              "gen_ai.usage.prompt_tokens": 120,
              "gen_ai.usage.completion_tokens": 9,
            },
            20,
            "1",
          ),
          span(
            "4",
            "cancel.tool",
            {
              "traceloop.span.kind": "tool",
              "traceloop.entity.name": "cancel_order",
              "traceloop.entity.input": '{"order_id":"O-7"}',
              "traceloop.entity.output": '{"ok":true}',
            },
            30,
            "1",
          ),
        ],
      }],
    }],
  };
  const { episodes } = convertOtlp(JSON.stringify(file), { captureId: "c" });
  assertEquals(episodes.length, 1);
  const kinds = episodes[0].events.map((e) => e.kind);
  assertEquals(kinds, [
    "episode.started",
    "tool.call.started",
    "tool.call.completed",
    "model.responded",
    "tool.call.started",
    "tool.call.completed",
    "episode.finished",
  ]);
  const model = episodes[0].events[3].payload.response as {
    usage: { input_tokens: number; output_tokens: number };
  };
  assertEquals(model.usage, { input_tokens: 120, output_tokens: 9 });
  assertEquals(episodes[0].events[4].payload.arguments, { order_id: "O-7" });

  let err = "";
  try {
    convertOtlp(
      JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [{}] }] }] }),
      { captureId: "c" },
    );
  } catch (e) {
    err = (e as Error).message;
  }
  assertOk(err.includes("resourceSpans[0].scopeSpans[0].spans[0]"), err);
});

Deno.test("sendOtlp batches, sends JSON, retries 429/503 with backoff and honours Retry-After; a 400 fails naming the endpoint", async () => {
  const seen: { type: string | null; auth: string | null; spans: number }[] =
    [];
  let refusals = 2;
  await using server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      const body: OtlpTraces =
        req.headers.get("content-type") === "application/x-protobuf"
          ? decodeOtlpProtobuf(new Uint8Array(await req.arrayBuffer()))
          : await req.json();
      if (new URL(req.url).pathname === "/bad") {
        return new Response("bad", { status: 400 });
      }
      if (refusals-- > 0) {
        return new Response("busy", {
          status: refusals === 1 ? 429 : 503,
          headers: { "retry-after": "0" },
        });
      }
      seen.push({
        type: req.headers.get("content-type"),
        auth: req.headers.get("x-api-key"),
        spans: body.resourceSpans[0].scopeSpans[0].spans.length,
      });
      return Response.json({});
    },
  );
  const url = `http://127.0.0.1:${server.addr.port}`;
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path);
  generateDeskEpisodes(store.sink("desk"), "desk", 10);
  const traces = captureToOtlp("desk", await eventsOf(store, "desk"));
  const total = traces.resourceSpans[0].scopeSpans[0].spans.length;
  const r = await sendOtlp(`${url}/v1/traces`, traces, {
    batchSize: 20,
    backoffMs: 1,
    headers: { "x-api-key": "k" },
  });
  assertEquals(r.spans, total);
  assertEquals(r.retries, 2);
  assertEquals(seen.reduce((n, s) => n + s.spans, 0), total);
  assertEquals(r.batches, Math.ceil(total / 20));
  assertOk(seen.every((s) => s.type === "application/json" && s.auth === "k"));
  seen.length = 0;
  const pb = await sendOtlp(`${url}/v1/traces`, traces, {
    batchSize: 50,
    protocol: "http/protobuf",
  });
  assertEquals([pb.spans, pb.retries], [total, 0]);
  assertEquals(seen.reduce((n, s) => n + s.spans, 0), total);
  assertOk(seen.every((s) => s.type === "application/x-protobuf"));
  const e = await assertRejects(
    () => sendOtlp(`${url}/bad`, traces, { backoffMs: 1 }),
    OtlpSendError,
  );
  assertEquals((e as OtlpSendError).status, 400);
});

// Over 80 lines: one scenario end to end, its steps and checks in order.
Deno.test("ingest.ts export otlp --out, import --format otlp (once per file), report --out; bad arguments say what to do", async () => {
  await using dir = await tempDir();
  const root = join(dir.path, "store");
  {
    using store = new HarnessStore(root);
    generateDeskEpisodes(store.sink("desk"), "desk", 5);
  }
  const run = async (args: string[]) => {
    let out = "";
    let err = "";
    const code = await main([...args, "--root", root], {
      out: (t) => out += t + "\n",
      err: (t) => err += t + "\n",
    });
    return { code, out, err };
  };
  const file = join(dir.path, "t.json");
  const ex = await run(["export", "otlp", "desk", "--out", file, "--json"]);
  assertEquals(ex.code, 0, ex.err);
  const im = await run([
    "import",
    "--format",
    "otlp",
    file,
    "--capture",
    "back",
    "--json",
  ]);
  assertEquals([im.code, JSON.parse(im.out).episodes], [0, 5], im.err);
  const again = await run([
    "import",
    "--format",
    "otlp",
    file,
    "--capture",
    "back",
  ]);
  assertEquals(again.code, 1);
  assertOk(/already imported/.test(again.err), again.err);
  const rep = await run(["report", "back", "--out", join(dir.path, "r.html")]);
  assertEquals(rep.code, 0, rep.err);
  const html = await Deno.readTextFile(join(dir.path, "r.html"));
  // Self-contained: nothing is loaded from anywhere.
  assertOk(html.includes("<script>") && !/(src|href)=["']?https?:/.test(html));
  // Protobuf to a .pb file, and back.
  const pbFile = join(dir.path, "t.pb");
  const exPb = await run(["export", "otlp", "desk", "--out", pbFile, "--json"]);
  assertEquals(exPb.code, 0, exPb.err);
  assertEquals(JSON.parse(exPb.out).protocol, "http/protobuf");
  assertEquals((await Deno.readFile(pbFile))[0], 0x0a);
  const imPb = await run([
    "import",
    "--format",
    "otlp",
    pbFile,
    "--capture",
    "back_pb",
    "--json",
  ]);
  assertEquals([imPb.code, JSON.parse(imPb.out).episodes], [0, 5], imPb.err);
  const badProtocol = await run([
    "export",
    "otlp",
    "desk",
    "--protocol",
    "grpc",
    "--out",
    "-",
  ]);
  assertEquals(badProtocol.code, 2);
  assertOk(/http\/json or http\/protobuf/.test(badProtocol.err));
  const pbStdout = await run([
    "export",
    "otlp",
    "desk",
    "--protocol",
    "http/protobuf",
    "--out",
    "-",
  ]);
  assertEquals(pbStdout.code, 2);
  assertOk(/--out FILE.pb/.test(pbStdout.err), pbStdout.err);
  const missing = await run(["export", "otlp"]);
  assertEquals(missing.code, 2);
  assertOk(/needs a capture id/.test(missing.err), missing.err);
  // No target: the JSON goes nowhere unasked (not megabytes to a terminal).
  const nowhere = await run(["export", "desk"]);
  assertEquals([nowhere.code, nowhere.out], [2, ""]);
  assertOk(/--out - prints the JSON/.test(nowhere.err), nowhere.err);
  const stdout = await run(["export", "desk", "--out", "-"]);
  assertEquals(stdout.code, 0, stdout.err);
  assertOk(JSON.parse(stdout.out).resourceSpans.length > 0);
});
