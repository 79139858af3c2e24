import {
  assertEquals,
  assertMatch,
  assertOk,
  assertRejects,
} from "../_assert.ts";
import { AnthropicMessagesModel } from "../../lib/models/anthropic_messages.ts";
import {
  ModelApiError,
  ModelResponseError,
} from "../../lib/models/binding_errors.ts";
import type { ChatRequest } from "../../lib/models/chat_types.ts";
import {
  anthropicError,
  message,
  startAnthropicServer,
} from "./_anthropic_server.ts";
import { closedPort } from "./_scripted_server.ts";

const KEY = "sk-ant-test-OKAPI-91b2c3d4-do-not-leak";

function model(
  baseUrl: string,
  o: { maxRetries?: number; timeoutMs?: number } = {},
): AnthropicMessagesModel {
  return new AnthropicMessagesModel("claude-test-1", {
    baseUrl,
    apiKey: KEY,
    ...o,
  });
}

const HELLO: ChatRequest = {
  messages: [
    { role: "system", content: "Be brief." },
    { role: "user", content: "Hello" },
  ],
};

const ORDER_TOOL = {
  name: "get_order",
  description: "Read an order",
  parameters: {
    type: "object",
    properties: { order_id: { type: "string" } },
    required: ["order_id"],
  },
};

Deno.test("AnthropicMessagesModel.complete() maps a plain answer, its usage and the system text", async () => {
  await using s = startAnthropicServer([
    message({
      content: [{ type: "text", text: "Hi" }, { type: "text", text: "!" }],
      usage: {
        input_tokens: 30,
        cache_read_input_tokens: 10,
        cache_creation_input_tokens: 2,
        output_tokens: 4,
      },
    }),
  ]);
  const r = await model(s.baseUrl).complete({ ...HELLO, temperature: 0.2 });
  assertEquals(r, {
    content: "Hi!",
    tool_calls: [],
    finish_reason: "stop",
    refusal: null,
    usage: { prompt_tokens: 42, completion_tokens: 4 },
    model: "claude-test-1",
  });
  const req = s.requests[0];
  assertEquals(req.path, "/v1/messages");
  assertOk(
    req.headers["x-api-key"] === KEY ||
      req.headers.authorization === `Bearer ${KEY}`,
    "the key is sent (x-api-key or a bearer token, as the SDK chooses)",
  );
  assertOk(req.headers["anthropic-version"]);
  assertEquals(req.body, {
    model: "claude-test-1",
    max_tokens: 4096,
    system: "Be brief.",
    messages: [{ role: "user", content: [{ type: "text", text: "Hello" }] }],
    temperature: 0.2,
  });
});

Deno.test("AnthropicMessagesModel.complete() sends tool_use and merges consecutive tool results into one user turn", async () => {
  await using s = startAnthropicServer([
    message({ content: [{ type: "text", text: "Both found." }] }),
  ]);
  await model(s.baseUrl).complete({
    messages: [
      { role: "system", content: "A" },
      { role: "system", content: "B" },
      { role: "user", content: "Find W1 and W2" },
      {
        role: "assistant",
        content: "Looking.",
        tool_calls: [
          {
            id: "t1",
            name: "get_order",
            arguments: { order_id: "W1" },
            raw_arguments: '{"order_id":"W1"}',
          },
          {
            id: "t2",
            name: "get_order",
            arguments: { order_id: "W2" },
            raw_arguments: '{"order_id":"W2"}',
          },
        ],
      },
      { role: "tool", tool_call_id: "t1", name: "get_order", content: "W1 ok" },
      { role: "tool", tool_call_id: "t2", name: "get_order", content: "W2 ok" },
      { role: "user", content: "And?" },
    ],
    tools: [ORDER_TOOL],
    tool_choice: "required",
    max_tokens: 100,
  });
  const body = s.requests[0].body!;
  assertEquals(body.system, "A\n\nB");
  assertEquals(body.max_tokens, 100);
  assertEquals(body.tools, [{
    name: "get_order",
    description: "Read an order",
    input_schema: ORDER_TOOL.parameters,
  }]);
  assertEquals(body.tool_choice, { type: "any" });
  assertEquals(body.messages, [
    { role: "user", content: [{ type: "text", text: "Find W1 and W2" }] },
    {
      role: "assistant",
      content: [
        { type: "text", text: "Looking." },
        {
          type: "tool_use",
          id: "t1",
          name: "get_order",
          input: { order_id: "W1" },
        },
        {
          type: "tool_use",
          id: "t2",
          name: "get_order",
          input: { order_id: "W2" },
        },
      ],
    },
    {
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "t1", content: "W1 ok" },
        { type: "tool_result", tool_use_id: "t2", content: "W2 ok" },
        { type: "text", text: "And?" },
      ],
    },
  ]);
});

Deno.test("AnthropicMessagesModel maps tool_choice auto and none", () => {
  const m = model("http://127.0.0.1:1");
  for (const [choice, wire] of [["auto", "auto"], ["none", "none"]] as const) {
    const body = m.wireRequest({
      ...HELLO,
      tools: [ORDER_TOOL],
      tool_choice: choice,
    });
    assertEquals(body.tool_choice, { type: wire });
  }
  assertEquals(m.wireRequest(HELLO).tools, undefined);
});

Deno.test("AnthropicMessagesModel.complete() reads two tool calls, keeping an input that is not an object", async () => {
  await using s = startAnthropicServer([
    message({
      content: [
        { type: "text", text: "Checking." },
        {
          type: "tool_use",
          id: "toolu_1",
          name: "get_order",
          input: { order_id: "W1" },
        },
        { type: "tool_use", id: "toolu_2", name: "get_order", input: "W2" },
      ],
    }),
  ]);
  const r = await model(s.baseUrl).complete({ ...HELLO, tools: [ORDER_TOOL] });
  assertEquals(r.finish_reason, "tool_calls");
  assertEquals(r.content, "Checking.");
  assertEquals(r.tool_calls[0], {
    id: "toolu_1",
    name: "get_order",
    arguments: { order_id: "W1" },
    raw_arguments: '{"order_id":"W1"}',
  });
  assertEquals(r.tool_calls[1].arguments, null);
  assertEquals(r.tool_calls[1].raw_arguments, '"W2"');
  assertMatch(r.tool_calls[1].arguments_error!, /not an object/);
});

Deno.test("AnthropicMessagesModel.complete() gets structured output through a forced tool and returns it as JSON text", async () => {
  await using s = startAnthropicServer([
    message({
      content: [{
        type: "tool_use",
        id: "toolu_9",
        name: "verdict",
        input: { answer: "yes", score: 3 },
      }],
    }),
    message({
      content: [{
        type: "tool_use",
        id: "toolu_10",
        name: "labels",
        input: { value: ["a", "b"] },
      }],
    }),
  ]);
  const schema = {
    type: "object",
    properties: { answer: { type: "string" }, score: { type: "integer" } },
    required: ["answer", "score"],
    additionalProperties: false,
  };
  const m = model(s.baseUrl);
  const r = await m.complete({
    ...HELLO,
    response_format: { name: "verdict", schema },
  });
  assertEquals(r.finish_reason, "stop");
  assertEquals(r.tool_calls, []);
  assertEquals(JSON.parse(r.content!), { answer: "yes", score: 3 });
  const body = s.requests[0].body!;
  assertEquals(body.tool_choice, { type: "tool", name: "verdict" });
  assertEquals(
    (body.tools as { input_schema: unknown }[])[0].input_schema,
    schema,
  );
  const arr = await m.complete({
    ...HELLO,
    response_format: { name: "labels", schema: { type: "array" } },
  });
  assertEquals(JSON.parse(arr.content!), ["a", "b"]);
  assertEquals(
    (s.requests[1].body!.tools as { input_schema: unknown }[])[0].input_schema,
    {
      type: "object",
      properties: { value: { type: "array" } },
      required: ["value"],
    },
  );
});

Deno.test("AnthropicMessagesModel.complete() rejects a text answer to a structured request unless it is JSON", async () => {
  await using s = startAnthropicServer([
    message({ content: [{ type: "text", text: "yes, 3" }] }),
    message({ content: [{ type: "text", text: '{"answer":"yes"}' }] }),
  ]);
  const m = model(s.baseUrl);
  const req = {
    ...HELLO,
    response_format: { name: "verdict", schema: { type: "object" } },
  };
  const err = await assertRejects(() => m.complete(req), ModelResponseError);
  assertMatch(err.message, /"verdict".*not JSON/);
  assertEquals((await m.complete(req)).content, '{"answer":"yes"}');
});

Deno.test("AnthropicMessagesModel.complete() maps stop reasons: refusal and max_tokens", async () => {
  await using s = startAnthropicServer([
    message({
      content: [{ type: "text", text: "I won't." }],
      stop_reason: "refusal",
    }),
    message({
      content: [{ type: "text", text: "cut" }],
      stop_reason: "max_tokens",
    }),
  ]);
  const m = model(s.baseUrl);
  const r = await m.complete(HELLO);
  assertEquals(r.finish_reason, "refusal");
  assertEquals(r.refusal, "I won't.");
  assertEquals(r.content, null);
  const l = await m.complete(HELLO);
  assertEquals(l.finish_reason, "length");
  assertEquals(l.content, "cut");
});

Deno.test("AnthropicMessagesModel.complete() retries a 429 after retry-after, and 529 twice", async () => {
  await using s = startAnthropicServer([
    anthropicError(429, "rate_limit_error", "slow down", {
      "retry-after": "1",
    }),
    message({ content: [{ type: "text", text: "ok" }] }),
    anthropicError(529, "overloaded_error", "Overloaded", {
      "retry-after-ms": "5",
    }),
    anthropicError(500, "api_error", "boom", { "retry-after-ms": "5" }),
    message({ content: [{ type: "text", text: "ok again" }] }),
  ]);
  const m = model(s.baseUrl);
  const t0 = performance.now();
  assertEquals((await m.complete(HELLO)).content, "ok");
  const ms = performance.now() - t0;
  assertOk(ms >= 950, `waited ${ms} ms, retry-after said 1 s`);
  assertEquals((await m.complete(HELLO)).content, "ok again");
  assertEquals(s.requests.length, 5);
});

Deno.test("AnthropicMessagesModel.complete() gives up after its bounded retries and says so", async () => {
  const always = anthropicError(500, "api_error", "Internal server error", {
    "retry-after-ms": "5",
  });
  await using s = startAnthropicServer(Array(6).fill(always));
  const err = await assertRejects(
    () => model(s.baseUrl, { maxRetries: 2 }).complete(HELLO),
    ModelApiError,
  ) as ModelApiError;
  assertEquals(s.requests.length, 3);
  assertEquals(err.attempts, 3);
  assertEquals(err.apiMessage, "Internal server error");
  assertMatch(
    err.message,
    /answered 500.*retried 2 times.*Internal server error/,
  );
});

Deno.test("AnthropicMessagesModel.complete() rejects a body that is not JSON or not a message", async () => {
  await using s = startAnthropicServer([
    { raw: "{not json" },
    { json: { type: "message", content: "text" } },
  ]);
  const m = model(s.baseUrl, { maxRetries: 0 });
  const e1 = await assertRejects(() => m.complete(HELLO), ModelResponseError);
  assertMatch(e1.message, /not valid JSON/);
  const e2 = await assertRejects(() => m.complete(HELLO), ModelResponseError);
  assertMatch(e2.message, /not a Messages API response \(no content list\)/);
});

Deno.test("AnthropicMessagesModel.complete() fails fast on a closed port, saying the URL cannot be reached", async () => {
  const url = `http://127.0.0.1:${closedPort()}`;
  const err = await assertRejects(
    () => model(url, { maxRetries: 1 }).complete(HELLO),
    ModelApiError,
  ) as ModelApiError;
  assertEquals(err.failure, "connection");
  assertEquals(err.attempts, 2);
  assertMatch(
    err.message,
    /Cannot reach the model API at http:\/\/127\.0\.0\.1:\d+ /,
  );
  // One back-off, not a request time-out: a time-out would say failure
  // "timeout", not "connection".
});
