/**
 * The export's attribute names against `@opentelemetry/semantic-conventions`
 * (incubating): every name is a current GenAI attribute, `error.type`, or
 * in harness's own `harness.*` namespace.
 */
import { assertEquals, assertOk } from "../_assert.ts";
import * as semconv from "@opentelemetry/semantic-conventions/incubating";
import { HarnessStore } from "../../lib/store/mod.ts";
import { generateDeskEpisodes } from "../../examples/order_desk/order_desk.ts";
import { message } from "../../lib/trace/mod.ts";
import { modelResponded } from "../../lib/trace/model_events.ts";
import { captureToOtlp } from "../../lib/otel/mod.ts";
import { fixedContext, tempDir } from "../_helpers.ts";
import { eventsOf } from "./_calls.ts";

/** Deprecated GenAI names the conventions replaced. */
const DEPRECATED = new Set([
  "gen_ai.system",
  "gen_ai.prompt",
  "gen_ai.completion",
  "gen_ai.usage.prompt_tokens",
  "gen_ai.usage.completion_tokens",
]);

Deno.test("captureToOtlp() uses only current GenAI attribute names (and harness.*); messages on the root, chat spans CLIENT", async () => {
  const genAi = new Set(
    Object.entries(semconv)
      .filter(([k, v]) => k.startsWith("ATTR_GEN_AI_") && typeof v === "string")
      .map(([, v]) => v as string)
      .filter((v) => !DEPRECATED.has(v)),
  );
  assertOk(genAi.has("gen_ai.input.messages"));
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path);
  generateDeskEpisodes(store.sink("desk"), "desk", 3);
  const ctx = fixedContext("desk", "ep_talk");
  store.sink("desk").emitMany([
    message(ctx, { role: "user", text: "Cancel O-1" }),
    modelResponded(ctx, {
      response: {
        model: "m-1",
        provider: "anthropic",
        finish: "end_turn",
        usage: { input_tokens: 5, output_tokens: 2 },
      },
    }),
    message(ctx, { role: "assistant", text: "Done" }),
  ]);
  const spans = captureToOtlp("desk", await eventsOf(store, "desk"))
    .resourceSpans[0].scopeSpans[0].spans;
  const outside = new Set<string>();
  for (const span of spans) {
    for (const a of span.attributes) {
      if (
        !a.key.startsWith("harness.") && !genAi.has(a.key) &&
        a.key !== semconv.ATTR_ERROR_TYPE
      ) outside.add(a.key);
    }
    assertEquals(span.events ?? [], [], "no per-message span events");
  }
  assertEquals([...outside], []);
  const chat = spans.find((s) => s.name === "chat m-1")!;
  assertEquals(chat.kind, 3);
  const value = (key: string, s = chat) =>
    s.attributes.find((a) => a.key === key)?.value;
  assertEquals(value("gen_ai.provider.name"), { stringValue: "anthropic" });
  assertEquals(value("gen_ai.response.finish_reasons"), {
    arrayValue: { values: [{ stringValue: "end_turn" }] },
  });
  const root = spans.find((s) =>
    !s.parentSpanId &&
    s.attributes.some((a) =>
      a.key === "gen_ai.conversation.id" &&
      (a.value as { stringValue: string }).stringValue === "ep_talk"
    )
  )!;
  assertEquals(
    JSON.parse(
      (value("gen_ai.input.messages", root) as { stringValue: string })
        .stringValue,
    ),
    [{ role: "user", parts: [{ type: "text", content: "Cancel O-1" }] }],
  );
  assertEquals(value("gen_ai.provider.name", root), {
    stringValue: "anthropic",
  });
  assertOk(value("gen_ai.agent.name", root));
});
