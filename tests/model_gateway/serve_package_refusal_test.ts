/**
 * A package served at the model API checks the model's state-changing
 * calls before the agent sees them: a write with a value outside its
 * candidates is never relayed (the upstream is asked again with the
 * refusal as that tool's answer; after two re-asks the client gets words,
 * "I cannot do that: …"), the refusal is counted on `/health` and recorded
 * (`refused` on an extra `model.responded`), and a write with allowed
 * values reaches the client exactly as the upstream sent it.
 *
 * @module
 */
import type OpenAI from "openai";
import { assertEquals, assertOk } from "../_assert.ts";
import { GatewayDriver } from "../../lib/forms/agent/gateway_driver.ts";
import { RetailEnv } from "../../eval/envs/tau2/mod.ts";
import { parseSse } from "./_upstreams.ts";
import { type GatewayRig, ofKind, startGateway } from "./_gateway.ts";
import {
  type AnthropicTurn,
  anthropicUntilForwarded,
  type ChatMessage,
  chatUntilForwarded,
} from "./_served_loop.ts";
import { RETAIL_CHAT_TOOLS } from "./_retail_agent.ts";
import {
  ANTHROPIC_TOOLS,
  RETAIL_INSTRUCTIONS,
  servedRetail,
} from "./_served_retail.ts";

const retail = servedRetail();
const EMAIL = "sofia.li7352@example.com";
const PENDING = "#W8855135";
/** An order of another customer: the conversation never shows it. */
const NEVER_SHOWN = "#W9300146";
const ASK =
  `Hi, my email is ${EMAIL}. Please cancel my pending order ${PENDING}, I no longer need it.`;
const ALLOWED = { order_id: PENDING, reason: "no longer needed" };
const OUTSIDE = { order_id: NEVER_SHOWN, reason: "no longer needed" };

async function servedRig(capture: string): Promise<GatewayRig> {
  return await startGateway({
    capture,
    gateway: { packages: { "": new GatewayDriver(retail.pkg) } },
  });
}

async function health(rig: GatewayRig) {
  return (await (await fetch(`${rig.server.url}/health`)).json())
    .model_gateway;
}

/** The chat conversation after the package's lookups, and the model's answer. */
async function chatToModel(rig: GatewayRig) {
  const client = rig.openai();
  const messages: ChatMessage[] = [
    { role: "system", content: RETAIL_INSTRUCTIONS },
    { role: "user", content: ASK },
  ];
  const got = await chatUntilForwarded(
    async (m) => {
      const { data, response } = await client.chat.completions.create({
        model: "gpt-agent",
        messages: m,
        tools: RETAIL_CHAT_TOOLS,
      }).withResponse();
      return {
        data,
        served: response.headers.get("x-harness-served") === "package",
      };
    },
    messages,
    new RetailEnv(retail.db),
  );
  return { ...got, messages };
}

const callsOf = (
  c: { choices: { message: { tool_calls?: unknown[] | null } }[] },
) =>
  (c.choices[0].message.tool_calls ?? []).map((x) => {
    const f = (x as { function: { name: string; arguments: string } })
      .function;
    return { name: f.name, arguments: JSON.parse(f.arguments) };
  });

Deno.test("a refused write never reaches the client: the upstream is asked again with the refusal as the tool's answer", async () => {
  await using rig = await servedRig("cap_refused");
  rig.up.push(
    { toolCalls: [{ name: "cancel_pending_order", arguments: OUTSIDE }] },
    { toolCalls: [{ name: "cancel_pending_order", arguments: ALLOWED }] },
  );
  const { answer, served, messages } = await chatToModel(rig);
  // The package made the lookups: user id, user, each of the four orders.
  assertOk(served >= 3, `${served} answers served`);
  assertEquals(
    messages.filter((m) => m.role === "tool").length >= 6,
    true,
  );

  // The client sees the second answer only, byte for byte.
  assertEquals(callsOf(answer), [
    { name: "cancel_pending_order", arguments: ALLOWED },
  ]);
  const [first, second] = rig.up.requests;
  assertEquals(rig.up.requests.length, 2);
  assertEquals(await rig.tap.responses.at(-1)!.body, second.response!.body);
  assertEquals(
    rig.tap.responses.at(-1)!.headers.get("x-harness-served"),
    null,
  );

  // The first request went with the state-changing tools narrowed: those
  // with no candidate yet hidden, the cancel's order id shown its
  // candidates; the reads as the client sent them.
  const sent = first.json!.tools as OpenAI.Chat.ChatCompletionFunctionTool[];
  const sentNames = new Set(sent.map((t) => t.function.name));
  const hidden = RETAIL_CHAT_TOOLS.map((t) =>
    (t as typeof sent[number]).function.name
  )
    .filter((n) => !sentNames.has(n));
  assertOk(hidden.length > 0, "no tool hidden");
  assertEquals(hidden.filter((n) => !retail.writes.has(n)), []);
  for (const t of sent) {
    if (retail.writes.has(t.function.name)) continue;
    assertEquals(
      t,
      RETAIL_CHAT_TOOLS.find((c) =>
        (c as typeof t).function.name === t.function.name
      ),
    );
  }
  const cancel = sent.find((t) => t.function.name === "cancel_pending_order")!;
  const orderId = (cancel.function.parameters as {
    properties: { order_id: { description: string } };
  }).properties.order_id;
  // The candidates in words: the user's own order id is in the conversation
  // already (not named again), the others the lookups found are; never one
  // the conversation did not show.
  assertOk(
    orderId.description.includes("text the user wrote, or one of #W"),
    orderId.description,
  );
  assertOk(!orderId.description.includes(PENDING), orderId.description);
  assertOk(!orderId.description.includes(NEVER_SHOWN), orderId.description);
  assertEquals(
    JSON.stringify(first.json!.messages),
    JSON.stringify(messages),
  );

  // The re-ask: the same conversation, the refused answer, then the
  // refusal as cancel_pending_order's answer.
  const again = second.json!.messages as Record<string, unknown>[];
  assertEquals(again.length, messages.length + 2);
  assertEquals(
    JSON.stringify(again.slice(0, messages.length)),
    JSON.stringify(messages),
  );
  const refusedCall = (again.at(-2)!.tool_calls as {
    id: string;
    function: { name: string; arguments: string };
  }[])[0];
  assertEquals(refusedCall.function.name, "cancel_pending_order");
  assertEquals(JSON.parse(refusedCall.function.arguments), OUTSIDE);
  const told = again.at(-1)!;
  assertEquals(told.role, "tool");
  assertEquals(told.tool_call_id, refusedCall.id);
  assertOk(
    String(told.content).startsWith(
      `Refused: cancel_pending_order: order_id = "${NEVER_SHOWN}" is not among its candidates`,
    ),
    String(told.content),
  );
  assertEquals(second.json!.tools, first.json!.tools);

  const h = await health(rig);
  assertEquals(h.refusals, 1);
  assertEquals(h.gave_up, 0);

  // The agent runs the allowed write and goes on: the refused answer and
  // its refusal were never part of its conversation.
  const m = answer.choices[0].message;
  messages.push({
    role: "assistant",
    content: m.content,
    tool_calls: m.tool_calls,
  });
  messages.push({
    role: "tool",
    tool_call_id: m.tool_calls![0].id,
    content: new RetailEnv(retail.db).respond("cancel_pending_order", ALLOWED),
  });
  rig.up.push({ text: "Your order is cancelled." });
  const done = await rig.openai().chat.completions.create({
    model: "gpt-agent",
    messages,
    tools: RETAIL_CHAT_TOOLS,
  });
  assertEquals(done.choices[0].message.content, "Your order is cancelled.");
  const third = rig.up.requests[2];
  assertEquals(
    JSON.stringify(third.json!.messages),
    JSON.stringify(messages),
  );
  assertEquals(third.body.includes("Refused"), false);
  assertEquals(third.body.includes(NEVER_SHOWN), false);

  // Recorded: the refused answer with why, then the answer the client got.
  const events = await rig.events();
  const responded = ofKind(events, "model.responded");
  const refused = responded.filter((e) => e.payload.refused !== undefined);
  assertEquals(refused.length, 1);
  assertEquals(refused[0].payload.refused, [{
    tool: "cancel_pending_order",
    reason:
      `cancel_pending_order: order_id = "${NEVER_SHOWN}" is not among its candidates`,
    arguments: OUTSIDE,
  }]);
  assertEquals(rig.server.server.modelGateway!.stats.record_misses, 0);
  const last = responded.at(-2)!;
  assertEquals(last.payload.refused, undefined);
  assertEquals(
    (last.payload.response as { tool_call_ids: string[] }).tool_call_ids,
    [callsOfIds(answer)[0]],
  );
  // The refused call is no call of the conversation.
  const started = ofKind(events, "tool.call.started").filter((e) =>
    (e.payload.tool as { host_name: string }).host_name ===
      "cancel_pending_order"
  );
  assertEquals(started.length, 1);
  assertEquals(started[0].payload.arguments, ALLOWED);
  const completed = ofKind(events, "tool.call.completed").filter((e) =>
    e.payload.host_call_id === started[0].payload.host_call_id
  );
  assertEquals(completed.length, 1);
  assertEquals(completed[0].parent_event_id, started[0].event_id);
});

function callsOfIds(
  c: { choices: { message: { tool_calls?: { id: string }[] | null } }[] },
): string[] {
  return (c.choices[0].message.tool_calls ?? []).map((x) => x.id);
}

Deno.test("a write with allowed values passes unchanged, and one refused three times is answered in words", async () => {
  await using rig = await servedRig("cap_gave_up");
  rig.up.push({
    text: "Cancelling it now.",
    toolCalls: [{ name: "cancel_pending_order", arguments: ALLOWED }],
  });
  const ok = await chatToModel(rig);
  assertEquals(rig.up.requests.length, 1);
  assertEquals(
    await rig.tap.responses.at(-1)!.body,
    rig.up.requests[0].response!.body,
  );
  assertEquals(ok.answer.choices[0].message.content, "Cancelling it now.");
  assertEquals((await health(rig)).refusals, 0);

  // The same conversation, the model insisting on an order never shown.
  for (let i = 0; i < 3; i++) {
    rig.up.push({
      toolCalls: [{ name: "cancel_pending_order", arguments: OUTSIDE }],
    });
  }
  const client = rig.openai();
  const { data, response } = await client.chat.completions.create({
    model: "gpt-agent",
    messages: ok.messages,
    tools: RETAIL_CHAT_TOOLS,
  }).withResponse();
  assertEquals(rig.up.requests.length, 4);
  assertEquals(response.headers.get("x-harness-served"), "package");
  assertEquals(response.headers.get("x-harness-refused"), "3");
  assertEquals(data.choices[0].message.tool_calls ?? [], []);
  assertEquals(data.choices[0].finish_reason, "stop");
  const words = data.choices[0].message.content ?? "";
  assertOk(words.startsWith("I cannot do that: "), words);
  assertOk(words.includes(NEVER_SHOWN), words);
  // Each re-ask carries every refused answer so far.
  assertEquals(
    rig.up.requests.slice(1).map((r) => (r.json!.messages as unknown[]).length),
    [ok.messages.length, ok.messages.length + 2, ok.messages.length + 4],
  );
  const h = await health(rig);
  assertEquals(h.refusals, 3);
  assertEquals(h.gave_up, 1);
  const events = await rig.events();
  const responded = ofKind(events, "model.responded");
  assertEquals(
    responded.filter((e) => e.payload.refused !== undefined).length,
    3,
  );
  assertEquals(
    (responded.at(-1)!.payload.response as { text: string }).text,
    words,
  );
  // What the package did, on each request: the write it let through went
  // upstream narrowed and checked; the last gave up, saying why.
  const requested = ofKind(events, "model.requested");
  const outcomes = requested.map((e) =>
    e.payload.package as { id: string; outcome: string; reason?: string }
  );
  assertEquals(outcomes.slice(-2).map((o) => [o.id, o.outcome]), [
    [`retail@${retail.pkg.digest}`, "forwarded"],
    [`retail@${retail.pkg.digest}`, "gave_up"],
  ]);
  assertOk(outcomes.at(-1)!.reason!.includes(NEVER_SHOWN));
  // The answer names the episode it was recorded under.
  assertEquals(
    response.headers.get("x-harness-episode"),
    requested.at(-1)!.episode_id,
  );
});

Deno.test("a refused write streamed on Anthropic Messages: the client gets the second stream event for event", async () => {
  await using rig = await servedRig("cap_refused_stream");
  const client = rig.anthropic();
  const params = {
    model: "claude-agent",
    max_tokens: 1024,
    system: RETAIL_INSTRUCTIONS,
    tools: ANTHROPIC_TOOLS,
  };
  rig.up.push(
    { toolCalls: [{ name: "cancel_pending_order", arguments: OUTSIDE }] },
    {
      text: "Done.",
      toolCalls: [{ name: "cancel_pending_order", arguments: ALLOWED }],
    },
  );
  const messages: AnthropicTurn[] = [{ role: "user", content: ASK }];
  const { answer } = await anthropicUntilForwarded(
    async (m) => {
      const data = await client.messages.stream({ ...params, messages: m })
        .finalMessage();
      return {
        data,
        served: rig.tap.responses.at(-1)!.headers.get("x-harness-served") ===
          "package",
      };
    },
    messages,
    new RetailEnv(retail.db),
  );
  assertEquals(rig.up.requests.length, 2);
  const second = rig.up.requests[1];
  assertEquals(
    parseSse(await rig.tap.responses.at(-1)!.body as string),
    parseSse(second.response!.body),
  );
  assertEquals(
    answer.content.flatMap((b) =>
      b.type === "tool_use" ? [[b.name, b.input]] : []
    ),
    [["cancel_pending_order", ALLOWED]],
  );
  const again = second.json!.messages as {
    role: string;
    content: Record<string, unknown>[];
  }[];
  const told = again.at(-1)!;
  assertEquals(told.role, "user");
  assertEquals(told.content.length, 1);
  assertEquals(told.content[0].type, "tool_result");
  assertEquals(told.content[0].is_error, true);
  assertEquals(
    told.content[0].tool_use_id,
    again.at(-2)!.content.find((b) => b.type === "tool_use")!.id,
  );
  assertOk(String(told.content[0].content).startsWith("Refused: "));
  assertEquals((await health(rig)).refusals, 1);
});
