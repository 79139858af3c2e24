/**
 * What the model gateway records of a conversation the official clients
 * hold through it: per exchange `model.requested` and `model.responded`
 * (with the upstream's usage), a `tool.call.started` per tool call of the
 * model, its `tool.call.completed` once the next request carries the result
 * (parented to the start), and nothing twice however often later requests
 * repeat the history.
 *
 * @module
 */
import type OpenAI from "openai";
import type { TraceEvent } from "../../lib/trace/mod.ts";
import { assertEquals, assertOk } from "../_assert.ts";
import {
  assertKeyNowhere,
  type GatewayRig,
  ofKind,
  startGateway,
} from "./_gateway.ts";
import type { AnthropicBlock } from "./_anthropic_sdk.ts";

const U1 = "Weather and time in Paris?";
const U3 = "Thanks! And tomorrow?";
const CALLS = [
  { name: "get_weather", arguments: { city: "Paris", unit: "celsius" } },
  { name: "get_time", arguments: { timezone: "Europe/Paris" } },
];
const RESULTS = [
  { city: "Paris", temperature: 21 },
  { timezone: "Europe/Paris", time: "10:42" },
];
const USAGE = [
  { input_tokens: 30, output_tokens: 10 },
  { input_tokens: 60, output_tokens: 12 },
  { input_tokens: 80, output_tokens: 5 },
];

/** The three scripted answers: two parallel calls, then text, then text. */
function script(rig: GatewayRig): void {
  rig.up.push(
    { text: "Let me look.", toolCalls: CALLS, usage: USAGE[0] },
    { text: "Paris: 21 degrees at 10:42.", usage: USAGE[1] },
    { text: "Sunny tomorrow.", usage: USAGE[2] },
  );
}

type Turns = (rig: GatewayRig, stream: boolean) => Promise<string[]>;

/** Chat Completions: the client resends the whole history each turn. */
const chatTurns: Turns = async (rig, stream) => {
  const client = rig.openai();
  const ask = async (
    messages: OpenAI.ChatCompletionMessageParam[],
  ): Promise<OpenAI.ChatCompletionMessage> => {
    const params = { model: "gpt-up", messages, tools: CHAT_TOOLS };
    const c = stream
      ? await client.chat.completions.stream({
        ...params,
        stream_options: { include_usage: true },
      }).finalChatCompletion()
      : await client.chat.completions.create(params);
    return c.choices[0].message;
  };
  const history: OpenAI.ChatCompletionMessageParam[] = [
    { role: "user", content: U1 },
  ];
  const a1 = await ask(history);
  const ids = (a1.tool_calls ?? []).map((c) => c.id);
  history.push(
    { role: "assistant", content: a1.content, tool_calls: a1.tool_calls },
    ...ids.map((id, i) => ({
      role: "tool" as const,
      tool_call_id: id,
      content: JSON.stringify(RESULTS[i]),
    })),
  );
  const a2 = await ask(history);
  history.push({ role: "assistant", content: a2.content });
  history.push({ role: "user", content: U3 });
  await ask(history);
  return ids;
};

const CHAT_TOOLS: OpenAI.ChatCompletionTool[] = CALLS.map((c) => ({
  type: "function",
  function: {
    name: c.name,
    parameters: { type: "object", properties: {} },
  },
}));

/** Responses API: whole history each turn, or `previous_response_id`. */
function responsesTurns(chained: boolean): Turns {
  return async (rig, stream) => {
    const client = rig.openai();
    const tools = CALLS.map((c) => ({
      type: "function" as const,
      name: c.name,
      parameters: { type: "object", properties: {} },
      strict: false,
    }));
    const ask = async (
      input: OpenAI.Responses.ResponseInputItem[],
      previous: string | undefined,
    ) => {
      const params = {
        model: "gpt-up",
        input,
        tools,
        ...(previous ? { previous_response_id: previous } : {}),
      };
      return stream
        ? await client.responses.stream(params).finalResponse()
        : await client.responses.create(params);
    };
    const history: OpenAI.Responses.ResponseInputItem[] = [
      { role: "user", content: U1 },
    ];
    const r1 = await ask(history, undefined);
    const calls = r1.output.flatMap((o) =>
      o.type === "function_call" ? [o] : []
    );
    const outputs = calls.map((c, i) => ({
      type: "function_call_output" as const,
      call_id: c.call_id,
      output: JSON.stringify(RESULTS[i]),
    }));
    history.push(
      ...r1.output as OpenAI.Responses.ResponseInputItem[],
      ...outputs,
    );
    const r2 = await ask(
      chained ? outputs : history,
      chained ? r1.id : undefined,
    );
    const u3 = { role: "user" as const, content: U3 };
    history.push(...r2.output as OpenAI.Responses.ResponseInputItem[], u3);
    await ask(chained ? [u3] : history, chained ? r2.id : undefined);
    return calls.map((c) => c.call_id);
  };
}

/** Anthropic Messages: tool results as `tool_result` blocks of a user turn. */
const messagesTurns: Turns = async (rig, stream) => {
  const client = rig.anthropic();
  const tools = CALLS.map((c) => ({
    name: c.name,
    input_schema: { type: "object", properties: {} },
  }));
  const ask = async (messages: unknown[]) => {
    const params = { model: "claude-up", max_tokens: 256, messages, tools };
    return stream
      ? await client.messages.stream(params).finalMessage()
      : await client.messages.create(params);
  };
  const history: { role: string; content: unknown }[] = [
    { role: "user", content: U1 },
  ];
  const m1 = await ask(history);
  const uses = m1.content.flatMap((b: AnthropicBlock) =>
    b.type === "tool_use" ? [b] : []
  );
  history.push(
    { role: "assistant", content: m1.content },
    {
      role: "user",
      content: uses.map((u, i) => ({
        type: "tool_result",
        tool_use_id: u.id,
        content: JSON.stringify(RESULTS[i]),
      })),
    },
  );
  const m2 = await ask(history);
  history.push({ role: "assistant", content: m2.content });
  history.push({ role: "user", content: U3 });
  await ask(history);
  return uses.map((u) => u.id);
};

/**
 * Check the recording of the three-turn conversation.
 *
 * @param events The capture's events.
 * @param ids The call ids the model gave.
 */
function assertConversationRecorded(events: TraceEvent[], ids: string[]): void {
  const requested = ofKind(events, "model.requested");
  const responded = ofKind(events, "model.responded");
  assertEquals(requested.length, 3);
  assertEquals(responded.length, 3);
  for (const [i, r] of responded.entries()) {
    assertEquals(r.parent_event_id, requested[i].event_id);
    assertOk(r.sequence > requested[i].sequence);
    const usage = (r.payload.response as { usage: Record<string, unknown> })
      .usage;
    assertEquals(
      [usage.input_tokens, usage.output_tokens],
      [USAGE[i].input_tokens, USAGE[i].output_tokens],
      `usage of exchange ${i + 1}`,
    );
  }
  const started = ofKind(events, "tool.call.started");
  assertEquals(
    started.map((e) => [
      e.payload.host_call_id,
      (e.payload.tool as { host_name: string }).host_name,
      e.payload.arguments,
    ]),
    ids.map((id, i) => [id, CALLS[i].name, CALLS[i].arguments]),
  );
  for (const s of started) {
    assertOk(s.sequence > responded[0].sequence);
    assertOk(s.sequence < requested[1].sequence);
  }
  const completed = ofKind(events, "tool.call.completed");
  assertEquals(
    completed.map((e) => [e.payload.host_call_id, e.parent_event_id]),
    started.map((s) => [s.payload.host_call_id, s.event_id]),
  );
  assertEquals(completed.map((e) => e.payload.result), RESULTS);
  for (const c of completed) {
    assertOk(c.sequence > responded[0].sequence);
    assertOk(c.sequence < responded[1].sequence);
  }
  assertEquals(ofKind(events, "tool.call.failed"), []);
  const users = ofKind(events, "message").filter((e) =>
    e.payload.role === "user"
  );
  assertEquals(users.map((e) => e.payload.text), [U1, U3]);
  assertEquals(new Set(events.map((e) => e.episode_id)).size, 1);
}

const CASES: [string, Turns][] = [
  ["Chat Completions", chatTurns],
  ["Responses API (whole history)", responsesTurns(false)],
  ["Responses API (previous_response_id)", responsesTurns(true)],
  ["Anthropic Messages", messagesTurns],
];

for (const [name, turns] of CASES) {
  for (const stream of [false, true]) {
    const how = stream ? "streamed" : "whole";
    Deno.test(`the model gateway records a ${how} ${name} tool conversation once`, async () => {
      await using rig = await startGateway();
      script(rig);
      const ids = await turns(rig, stream);
      assertEquals(rig.up.pending, 0);
      const events = await rig.events();
      assertConversationRecorded(events, ids);
      await assertKeyNowhere(rig);
    });
  }
}

Deno.test("the model gateway records an Anthropic tool_result with is_error as a failed call", async () => {
  await using rig = await startGateway();
  rig.up.push(
    { toolCalls: CALLS, usage: USAGE[0] },
    { text: "Sorry.", usage: USAGE[1] },
  );
  const client = rig.anthropic();
  const first = { role: "user", content: U1 };
  const m1 = await client.messages.create({
    model: "claude-up",
    max_tokens: 64,
    messages: [first],
  });
  await client.messages.create({
    model: "claude-up",
    max_tokens: 64,
    messages: [first, { role: "assistant", content: m1.content }, {
      role: "user",
      content: [
        {
          type: "tool_result",
          tool_use_id: "toolu_1_0",
          content: "city not found",
          is_error: true,
        },
        {
          type: "tool_result",
          tool_use_id: "toolu_1_1",
          content: JSON.stringify(RESULTS[1]),
        },
      ],
    }],
  });
  const events = await rig.events();
  const started = ofKind(events, "tool.call.started");
  const failed = ofKind(events, "tool.call.failed");
  const completed = ofKind(events, "tool.call.completed");
  assertEquals(failed.map((e) => [e.parent_event_id, e.payload.error]), [
    [started[0].event_id, { message: "city not found" }],
  ]);
  assertEquals(completed.map((e) => e.parent_event_id), [started[1].event_id]);
});

Deno.test("the model gateway records an upstream error and a cut stream as answers without tool calls", async () => {
  await using rig = await startGateway();
  rig.up.push(
    { status: 429, headers: { "retry-after": "2" }, error: "Slow down" },
    { text: "Partial", toolCalls: CALLS, cutAfterChunks: 3 },
  );
  const client = rig.openai();
  await client.chat.completions.create({
    model: "gpt-up",
    messages: [{ role: "user", content: U1 }],
  }).catch(() => null);
  await client.chat.completions.stream({
    model: "gpt-up",
    messages: [{ role: "user", content: U1 }],
  }).finalChatCompletion().catch(() => null);
  const events = await rig.events();
  const responded = ofKind(events, "model.responded");
  assertEquals(responded.map((e) => e.payload.status), [429, 200]);
  assertEquals(
    (responded[0].payload.error as { message: string }).message,
    "Slow down",
  );
  assertEquals(responded[1].payload.incomplete, true);
  assertEquals(ofKind(events, "tool.call.started"), []);
  await assertKeyNowhere(rig);
});
