import {
  assertEquals,
  assertMatch,
  assertOk,
  assertRejects,
} from "../_assert.ts";
import { OpenAiChatModel } from "../../lib/models/openai_chat.ts";
import {
  ModelApiError,
  ModelConfigError,
  ModelResponseError,
} from "../../lib/models/binding_errors.ts";
import type { ChatRequest } from "../../lib/models/chat_types.ts";
import { apiError, completion, startOpenAiServer } from "./_openai_server.ts";
import { closedPort } from "./_scripted_server.ts";

const KEY = "sk-test-ZEBRA-7f3a9c1e-do-not-leak";

function model(
  baseUrl: string,
  o: { maxRetries?: number; timeoutMs?: number } = {},
): OpenAiChatModel {
  return new OpenAiChatModel("meta-llama/Llama-3-8B", {
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

Deno.test("OpenAiChatModel.complete() maps a plain answer and its usage", async () => {
  await using s = startOpenAiServer([
    completion({
      content: "Hi there",
      usage: { prompt_tokens: 21, completion_tokens: 3 },
    }),
  ]);
  const r = await model(s.baseUrl).complete({ ...HELLO, temperature: 0 });
  assertEquals(r, {
    content: "Hi there",
    tool_calls: [],
    finish_reason: "stop",
    refusal: null,
    usage: { prompt_tokens: 21, completion_tokens: 3 },
    model: "test-model-2024",
  });
  assertEquals(s.requests.length, 1);
  const req = s.requests[0];
  assertEquals(req.method, "POST");
  assertEquals(req.path, "/v1/chat/completions");
  assertEquals(req.headers.authorization, `Bearer ${KEY}`);
  assertEquals(req.body, {
    model: "meta-llama/Llama-3-8B",
    messages: [
      { role: "system", content: "Be brief." },
      { role: "user", content: "Hello" },
    ],
    temperature: 0,
  });
});

Deno.test("OpenAiChatModel.complete() sends tools and a conversation with tool results, and reads two tool calls", async () => {
  await using s = startOpenAiServer([
    completion({
      tool_calls: [
        { id: "call_a", name: "get_order", arguments: '{"order_id":"W1"}' },
        { id: "call_b", name: "get_user", arguments: '{"user_id":"u7"}' },
      ],
    }),
  ]);
  const r = await model(s.baseUrl).complete({
    messages: [
      { role: "user", content: "Where is W1?" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{
          id: "call_0",
          name: "find",
          arguments: { q: "W1" },
          raw_arguments: '{"q": "W1"}',
        }],
      },
      { role: "tool", tool_call_id: "call_0", name: "find", content: "ok" },
    ],
    tools: [{
      name: "get_order",
      description: "Read an order",
      parameters: {
        type: "object",
        properties: { order_id: { type: "string" } },
        required: ["order_id"],
      },
    }, {
      name: "get_user",
      parameters: { type: "object", properties: {} },
    }],
    tool_choice: "required",
    max_tokens: 64,
  });
  assertEquals(r.finish_reason, "tool_calls");
  assertEquals(r.content, null);
  assertEquals(r.tool_calls, [
    {
      id: "call_a",
      name: "get_order",
      arguments: { order_id: "W1" },
      raw_arguments: '{"order_id":"W1"}',
    },
    {
      id: "call_b",
      name: "get_user",
      arguments: { user_id: "u7" },
      raw_arguments: '{"user_id":"u7"}',
    },
  ]);
  const body = s.requests[0].body!;
  assertEquals(body.tools, [
    {
      type: "function",
      function: {
        name: "get_order",
        description: "Read an order",
        parameters: {
          type: "object",
          properties: { order_id: { type: "string" } },
          required: ["order_id"],
        },
      },
    },
    {
      type: "function",
      function: {
        name: "get_user",
        parameters: { type: "object", properties: {} },
      },
    },
  ]);
  assertEquals(body.tool_choice, "required");
  assertEquals(body.max_tokens, 64, "a local server gets max_tokens");
  assertEquals(body.max_completion_tokens, undefined);
  assertEquals(body.messages, [
    { role: "user", content: "Where is W1?" },
    {
      role: "assistant",
      content: null,
      tool_calls: [{
        id: "call_0",
        type: "function",
        function: { name: "find", arguments: '{"q":"W1"}' },
      }],
    },
    { role: "tool", tool_call_id: "call_0", content: "ok" },
  ]);
});

Deno.test("OpenAiChatModel.complete() asks for strict json_schema output and returns its JSON text", async () => {
  await using s = startOpenAiServer([
    completion({ content: '{"answer":"yes","score":3}' }),
  ]);
  const schema = {
    type: "object",
    properties: { answer: { type: "string" }, score: { type: "integer" } },
    required: ["answer", "score"],
    additionalProperties: false,
  };
  const r = await model(s.baseUrl).complete({
    ...HELLO,
    response_format: { name: "verdict", schema },
  });
  assertEquals(JSON.parse(r.content!), { answer: "yes", score: 3 });
  assertEquals(s.requests[0].body!.response_format, {
    type: "json_schema",
    json_schema: { name: "verdict", schema, strict: true },
  });
});

Deno.test("OpenAiChatModel.complete() rejects structured output that is not JSON", async () => {
  await using s = startOpenAiServer([completion({ content: "yes, 3" })]);
  const err = await assertRejects(
    () =>
      model(s.baseUrl).complete({
        ...HELLO,
        response_format: { name: "verdict", schema: { type: "object" } },
      }),
    ModelResponseError,
  );
  assertMatch(err.message, /"verdict".*not JSON/);
  assertEquals((err as ModelResponseError).excerpt, "yes, 3");
});

Deno.test("OpenAiChatModel.complete() reports a refusal", async () => {
  await using s = startOpenAiServer([
    completion({ refusal: "I can't help with that." }),
  ]);
  const r = await model(s.baseUrl).complete({
    ...HELLO,
    response_format: { name: "x", schema: { type: "object" } },
  });
  assertEquals(r.finish_reason, "refusal");
  assertEquals(r.refusal, "I can't help with that.");
  assertEquals(r.content, null);
});

Deno.test("OpenAiChatModel.complete() keeps tool arguments that are not a JSON object, as null with the reason", async () => {
  await using s = startOpenAiServer([
    completion({
      tool_calls: [
        { name: "a", arguments: '{"order_id": "W1"' },
        { name: "b", arguments: "[1, 2]" },
        { name: "c", arguments: "" },
      ],
    }),
  ]);
  const r = await model(s.baseUrl).complete(HELLO);
  assertEquals(r.tool_calls[0].arguments, null);
  assertEquals(r.tool_calls[0].raw_arguments, '{"order_id": "W1"');
  assertMatch(r.tool_calls[0].arguments_error!, /not valid JSON/);
  assertEquals(r.tool_calls[1].arguments, null);
  assertMatch(r.tool_calls[1].arguments_error!, /not an object \(an array\)/);
  assertEquals(r.tool_calls[2].arguments, {}, "empty arguments: none");
});

Deno.test("OpenAiChatModel.complete() retries a 429 after the wait retry-after asks for", async () => {
  await using s = startOpenAiServer([
    apiError(429, "Rate limit reached", { "retry-after": "1" }),
    completion({ content: "after the wait" }),
  ]);
  const t0 = performance.now();
  const r = await model(s.baseUrl).complete(HELLO);
  const ms = performance.now() - t0;
  assertEquals(r.content, "after the wait");
  assertEquals(s.requests.length, 2);
  assertEquals(s.requests[1].headers["x-stainless-retry-count"], "1");
  assertOk(ms >= 950, `waited ${ms} ms, retry-after said 1 s`);
});

Deno.test("OpenAiChatModel.complete() retries 500 twice with exponential back-off, then succeeds", async () => {
  await using s = startOpenAiServer([
    apiError(500, "boom"),
    apiError(502, "boom again"),
    completion({ content: "third time" }),
  ]);
  const t0 = performance.now();
  const r = await model(s.baseUrl).complete(HELLO);
  const ms = performance.now() - t0;
  assertEquals(r.content, "third time");
  assertEquals(s.requests.length, 3);
  // 0.5 s then 1 s, each less up to 25 % jitter (at least; a busy machine
  // only adds)
  assertOk(ms >= 1100, `back-off took ${ms} ms`);
});

Deno.test("OpenAiChatModel.complete() gives up after its bounded retries on a 500 that persists, and says so", async () => {
  const always = apiError(500, "The server had an error", {
    "retry-after-ms": "5",
  });
  await using s = startOpenAiServer(Array(6).fill(always));
  const err = await assertRejects(
    () => model(s.baseUrl).complete(HELLO),
    ModelApiError,
  ) as ModelApiError;
  assertEquals(s.requests.length, 4, "1 request + 3 retries by default");
  assertEquals(err.status, 500);
  assertEquals(err.attempts, 4);
  assertEquals(err.retried, true);
  assertEquals(err.failure, "http");
  assertEquals(err.apiMessage, "The server had an error");
  assertMatch(err.message, /answered 500.*retried 3 times/);
  assertMatch(err.message, /The server had an error/);
});

Deno.test("OpenAiChatModel.complete() does not retry a 400 and says to check the model", async () => {
  await using s = startOpenAiServer([
    apiError(400, "model 'nope' does not support tools"),
  ]);
  const err = await assertRejects(
    () => model(s.baseUrl, { maxRetries: 2 }).complete(HELLO),
    ModelApiError,
  ) as ModelApiError;
  assertEquals(s.requests.length, 1);
  assertEquals(err.retried, false);
  assertMatch(err.message, /400.*not retried.*check the model name/);
});

Deno.test("OpenAiChatModel.complete() rejects a body that is not JSON", async () => {
  await using s = startOpenAiServer([
    { raw: "<html>Bad gateway</html>" },
    { raw: "<html>hello</html>", headers: { "content-type": "text/html" } },
    { json: { object: "list", data: [] } },
  ]);
  const m = model(s.baseUrl, { maxRetries: 0 });
  const e1 = await assertRejects(() => m.complete(HELLO), ModelResponseError);
  assertMatch(e1.message, /not valid JSON/);
  const e2 = await assertRejects(() => m.complete(HELLO), ModelResponseError);
  assertMatch(e2.message, /not a Chat Completions response/);
  assertEquals((e2 as ModelResponseError).excerpt, "<html>hello</html>");
  const e3 = await assertRejects(() => m.complete(HELLO), ModelResponseError);
  assertMatch(e3.message, /no choices/);
});

Deno.test("OpenAiChatModel.complete() fails as a connection failure, not a time-out, when nothing listens at the URL", async () => {
  const url = `http://127.0.0.1:${closedPort()}/v1`;
  const err = await assertRejects(
    () => model(url).complete(HELLO),
    ModelApiError,
  ) as ModelApiError;
  assertEquals(err.failure, "connection");
  assertEquals(err.status, null);
  assertEquals(err.attempts, 4);
  assertMatch(
    err.message,
    /Cannot reach the model API at http:\/\/127\.0\.0\.1/,
  );
  assertMatch(err.message, /check the URL/);
  // Three back-offs, no request time-out: a time-out would say
  // failure "timeout", not "connection".
});

Deno.test("OpenAiChatModel.complete() times out a server that does not answer", async () => {
  await using s = startOpenAiServer([{ hang: true }, { hang: true }]);
  const err = await assertRejects(
    () => model(s.baseUrl, { timeoutMs: 200, maxRetries: 1 }).complete(HELLO),
    ModelApiError,
  ) as ModelApiError;
  assertEquals(err.failure, "timeout");
  assertEquals(err.attempts, 2);
  assertEquals(s.requests.length, 2);
  assertMatch(err.message, /did not answer in time.*retried 1 time\b/);
});

Deno.test("OpenAiChatModel.complete() stops when the caller aborts", async () => {
  await using s = startOpenAiServer([{ hang: true }]);
  const ac = new AbortController();
  const p = model(s.baseUrl).complete({ ...HELLO, signal: ac.signal });
  ac.abort(new Error("stop now"));
  await assertRejects(() => p, /stop now/);
});

Deno.test("OpenAiChatModel never shows its key: not in errors, toString, JSON or inspect", async () => {
  await using s = startOpenAiServer([
    apiError(401, `Incorrect API key provided: ${KEY}.`),
    { raw: `not json ${KEY}` },
    { raw: `${KEY}`, headers: { "content-type": "text/plain" } },
  ]);
  const m = model(s.baseUrl, { maxRetries: 0 });
  const errors = [
    await assertRejects(() => m.complete(HELLO), ModelApiError),
    await assertRejects(() => m.complete(HELLO), ModelResponseError),
    await assertRejects(() => m.complete(HELLO), ModelResponseError),
    await assertRejects(
      () =>
        model(`http://127.0.0.1:${closedPort()}/v1`, { maxRetries: 0 })
          .complete(HELLO),
      ModelApiError,
    ),
  ];
  assertMatch(errors[0].message, /401.*check the API key/);
  assertMatch(errors[0].message, /\[redacted\]/);
  const texts = [
    String(m),
    JSON.stringify(m),
    Deno.inspect(m, { depth: 10, showHidden: true }),
    ...errors.flatMap((e) => [
      String(e),
      e.stack ?? "",
      JSON.stringify(e),
      Deno.inspect(e, { depth: 10, showHidden: true }),
    ]),
  ];
  for (const t of texts) assertOk(!t.includes(KEY), `key leaked in: ${t}`);
  assertOk(texts.some((t) => t.includes("openai/meta-llama/Llama-3-8B")));
});

Deno.test("OpenAiChatModel refuses to start without a key or with a bad URL", () => {
  for (
    const [o, re] of [
      [{ baseUrl: "http://127.0.0.1:1/v1" }, /set OPENAI_API_KEY/],
      [{ baseUrl: "ftp://x", apiKey: KEY }, /not an http\(s\) URL/],
    ] as const
  ) {
    let err: unknown = null;
    try {
      new OpenAiChatModel("m", o);
    } catch (e) {
      err = e;
    }
    assertOk(err instanceof ModelConfigError);
    assertMatch(err.message, re);
  }
});
