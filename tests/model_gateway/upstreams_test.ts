/**
 * The scripted upstream speaks each wire as the official clients expect:
 * driven directly (no gateway) with `openai` and `@anthropic-ai/sdk`.
 *
 * @module
 */
import OpenAI from "openai";
import { assertEquals, assertOk, assertRejects } from "../_assert.ts";
import {
  parseSse,
  pieces,
  renderAnswer,
  startUpstreams,
  tapFetch,
  type Upstreams,
} from "./_upstreams.ts";
import {
  Anthropic,
  type AnthropicApiError,
  type AnthropicClient,
} from "./_anthropic_sdk.ts";

const KEY = "sk-upstream-test-key-3b1f";
const WEATHER = [
  { name: "get_weather", arguments: { city: "Paris", unit: "celsius" } },
  { name: "get_time", arguments: { timezone: "Europe/Rome" } },
];

function openai(up: Upstreams, tap?: typeof fetch): OpenAI {
  return new OpenAI({
    baseURL: up.openaiBase,
    apiKey: KEY,
    organization: "org-up",
    maxRetries: 0,
    fetch: tap,
  });
}

function anthropic(up: Upstreams, tap?: typeof fetch): AnthropicClient {
  return new Anthropic({
    baseURL: up.anthropicBase,
    apiKey: KEY,
    maxRetries: 0,
    fetch: tap,
  });
}

const CHAT = {
  model: "gpt-up",
  messages: [{ role: "user" as const, content: "Weather in Paris?" }],
};
const MESSAGES = {
  model: "claude-up",
  max_tokens: 256,
  messages: [{ role: "user" as const, content: "Weather in Paris?" }],
};

Deno.test("startUpstreams() answers a chat completion with parallel tool calls, byte for byte", async () => {
  await using up = startUpstreams([{
    text: "Checking.",
    toolCalls: WEATHER,
    usage: { input_tokens: 31, output_tokens: 12 },
  }]);
  const tap = tapFetch();
  const data = await openai(up, tap.fetch).chat.completions.create(CHAT);
  const ex = up.requests[0];
  assertEquals(await tap.responses[0].body, ex.response!.body);
  assertEquals(tap.responses[0].headers.get("x-request-id"), "req_up1");
  assertEquals(ex.sent, [ex.response!.body]);
  assertEquals(await ex.ended, "complete");
  assertEquals(data.choices[0].message.content, "Checking.");
  assertEquals(data.choices[0].finish_reason, "tool_calls");
  assertEquals(
    data.choices[0].message.tool_calls?.map((c) =>
      c.type === "function" ? [c.id, c.function.name, c.function.arguments] : []
    ),
    [
      ["call_1_0", "get_weather", '{"city":"Paris","unit":"celsius"}'],
      ["call_1_1", "get_time", '{"timezone":"Europe/Rome"}'],
    ],
  );
  assertEquals(data.usage?.prompt_tokens, 31);
  assertEquals(data.usage?.completion_tokens, 12);
  assertEquals(ex.method, "POST");
  assertEquals(ex.path, "/v1/chat/completions");
  assertEquals(ex.route, "chat");
  assertEquals(ex.headers.authorization, `Bearer ${KEY}`);
  assertEquals(ex.headers["openai-organization"], "org-up");
  assertEquals(JSON.parse(ex.body), ex.json);
  assertEquals(ex.json?.messages, CHAT.messages);
});

Deno.test("startUpstreams() streams a chat completion: argument deltas per call, usage in the last chunk", async () => {
  await using up = startUpstreams([{
    text: "Checking the weather.",
    toolCalls: WEATHER,
    usage: { input_tokens: 40, output_tokens: 9 },
  }]);
  const stream = openai(up).chat.completions.stream({
    ...CHAT,
    stream_options: { include_usage: true },
  });
  const deltas: [number, string][] = [];
  stream.on(
    "tool_calls.function.arguments.delta",
    (e) => deltas.push([e.index, e.arguments_delta]),
  );
  const chunks: unknown[] = [];
  stream.on("chunk", (c) => chunks.push(c));
  const final = await stream.finalChatCompletion();
  const ex = up.requests[0];
  assertEquals(await ex.ended, "complete");
  assertEquals(ex.json?.stream, true);
  const events = parseSse(ex.response!.body);
  assertEquals(events.at(-1), { event: null, data: "[DONE]" });
  assertEquals(chunks, events.slice(0, -1).map((e) => JSON.parse(e.data)));
  const last = chunks.at(-1) as OpenAI.ChatCompletionChunk;
  assertEquals(last.choices, []);
  assertEquals(last.usage?.prompt_tokens, 40);
  assertEquals(final.usage?.completion_tokens, 9);
  assertEquals(final.choices[0].message.content, "Checking the weather.");
  assertEquals(
    final.choices[0].message.tool_calls?.map((c) =>
      c.type === "function" ? [c.id, c.function.name, c.function.arguments] : []
    ),
    [
      ["call_1_0", "get_weather", '{"city":"Paris","unit":"celsius"}'],
      ["call_1_1", "get_time", '{"timezone":"Europe/Rome"}'],
    ],
  );
  assertOk(deltas.filter(([i]) => i === 0).length >= 3);
  assertOk(deltas.filter(([i]) => i === 1).length >= 3);
  assertEquals(
    deltas.filter(([i]) => i === 1).map(([, d]) => d).join(""),
    '{"timezone":"Europe/Rome"}',
  );
});

Deno.test("startUpstreams() answers the Responses API with a message and function calls", async () => {
  await using up = startUpstreams([{
    text: "Here you go.",
    toolCalls: WEATHER,
    usage: { input_tokens: 20, output_tokens: 5, cached_tokens: 4 },
  }]);
  const tap = tapFetch();
  const data = await openai(up, tap.fetch).responses.create({
    model: "gpt-up",
    input: "Weather in Paris?",
  });
  assertEquals(await tap.responses[0].body, up.requests[0].response!.body);
  assertEquals(up.requests[0].path, "/v1/responses");
  assertEquals(data.output_text, "Here you go.");
  assertEquals(
    data.output.map((o) =>
      o.type === "function_call" ? [o.call_id, o.name, o.arguments] : o.type
    ),
    [
      "message",
      ["call_1_0", "get_weather", '{"city":"Paris","unit":"celsius"}'],
      ["call_1_1", "get_time", '{"timezone":"Europe/Rome"}'],
    ],
  );
  assertEquals(data.usage, {
    input_tokens: 20,
    input_tokens_details: { cached_tokens: 4 },
    output_tokens: 5,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 25,
  });
});

Deno.test("startUpstreams() streams the Responses API in the real event order", async () => {
  await using up = startUpstreams([{
    text: "Here you go, Paris.",
    toolCalls: WEATHER,
    usage: { input_tokens: 20, output_tokens: 5 },
  }]);
  const stream = openai(up).responses.stream({
    model: "gpt-up",
    input: "Weather in Paris?",
  });
  const got: { type: string; sequence_number: number }[] = [];
  for await (const e of stream) got.push(e);
  const final = await stream.finalResponse();
  const sent = parseSse(up.requests[0].response!.body);
  assertEquals(got, sent.map((e) => JSON.parse(e.data)));
  assertEquals(sent.map((e) => e.event), got.map((e) => e.type));
  assertEquals(got.map((e) => e.sequence_number), got.map((_, i) => i));
  const types = [...new Set(got.map((e) => e.type))];
  assertEquals(types, [
    "response.created",
    "response.in_progress",
    "response.output_item.added",
    "response.content_part.added",
    "response.output_text.delta",
    "response.output_text.done",
    "response.content_part.done",
    "response.output_item.done",
    "response.function_call_arguments.delta",
    "response.function_call_arguments.done",
    "response.completed",
  ]);
  assertOk(
    got.filter((e) => e.type === "response.function_call_arguments.delta")
      .length >= 6,
  );
  assertEquals(final.output_text, "Here you go, Paris.");
  assertEquals(final.usage?.total_tokens, 25);
  assertEquals(
    final.output.flatMap((o) => o.type === "function_call" ? [o.name] : []),
    ["get_weather", "get_time"],
  );
});

Deno.test("startUpstreams() answers Anthropic Messages with text, parallel tool_use and cache usage", async () => {
  await using up = startUpstreams([{
    text: "Let me check.",
    toolCalls: WEATHER,
    usage: {
      input_tokens: 50,
      output_tokens: 14,
      cached_tokens: 30,
      cache_creation_input_tokens: 8,
    },
  }]);
  const tap = tapFetch();
  const data = await anthropic(up, tap.fetch).messages.create(MESSAGES);
  const ex = up.requests[0];
  assertEquals(await tap.responses[0].body, ex.response!.body);
  assertEquals(tap.responses[0].headers.get("request-id"), "req_up1");
  assertEquals(ex.path, "/v1/messages");
  assertEquals(ex.headers.authorization, `Bearer ${KEY}`);
  assertOk(ex.headers["anthropic-version"]);
  assertEquals(data.stop_reason, "tool_use");
  assertEquals(data.content.map((b) => b.type), [
    "text",
    "tool_use",
    "tool_use",
  ]);
  assertEquals(
    data.content.flatMap((b) =>
      b.type === "tool_use" ? [[b.id, b.name, b.input]] : []
    ),
    [
      ["toolu_1_0", "get_weather", { city: "Paris", unit: "celsius" }],
      ["toolu_1_1", "get_time", { timezone: "Europe/Rome" }],
    ],
  );
  assertEquals(data.usage.input_tokens, 50);
  assertEquals(data.usage.output_tokens, 14);
  assertEquals(data.usage.cache_read_input_tokens, 30);
  assertEquals(data.usage.cache_creation_input_tokens, 8);
});

Deno.test("startUpstreams() streams Anthropic Messages: ping, text and input_json deltas, final usage", async () => {
  await using up = startUpstreams([{
    text: "Let me check.",
    toolCalls: WEATHER,
    usage: { input_tokens: 50, output_tokens: 14 },
  }]);
  const stream = anthropic(up).messages.stream(MESSAGES);
  const raw: unknown[] = [];
  stream.on("streamEvent", (e) => raw.push(structuredClone(e)));
  const partial: string[] = [];
  stream.on("inputJson", (p) => partial.push(p));
  const final = await stream.finalMessage();
  const sent = parseSse(up.requests[0].response!.body);
  assertEquals(sent.map((e) => e.event), [
    "message_start",
    "content_block_start",
    "ping",
    "content_block_delta",
    "content_block_delta",
    "content_block_stop",
    "content_block_start",
    "content_block_delta",
    "content_block_delta",
    "content_block_delta",
    "content_block_delta",
    "content_block_delta",
    "content_block_stop",
    "content_block_start",
    "content_block_delta",
    "content_block_delta",
    "content_block_delta",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
  ]);
  assertEquals(
    raw,
    sent.filter((e) => e.event !== "ping").map((e) => JSON.parse(e.data)),
  );
  assertEquals(partial.length, 9);
  assertEquals(final.stop_reason, "tool_use");
  assertEquals(final.usage.input_tokens, 50);
  assertEquals(final.usage.output_tokens, 14);
  assertEquals(
    final.content.flatMap((b) => b.type === "tool_use" ? [b.input] : []),
    [{ city: "Paris", unit: "celsius" }, { timezone: "Europe/Rome" }],
  );
  assertEquals(
    final.content.flatMap((b) => b.type === "text" ? [b.text] : []),
    ["Let me check."],
  );
});

Deno.test("startUpstreams() counts tokens and lists models in each API's shape", async () => {
  await using up = startUpstreams([
    { route: "count_tokens", usage: { input_tokens: 123 } },
  ]);
  const count = await anthropic(up).messages.countTokens({
    model: "claude-up",
    messages: MESSAGES.messages,
  });
  assertEquals(count, { input_tokens: 123 });
  const claude = [];
  for await (const m of anthropic(up).models.list()) claude.push(m.id);
  assertEquals(claude, ["claude-up-1", "claude-up-2"]);
  const gpt = [];
  for await (const m of openai(up).models.list()) gpt.push(m.id);
  assertEquals(gpt, ["gpt-up-1", "gpt-up-2"]);
  assertEquals(up.requests.map((r) => [r.method, r.path.split("?")[0]]), [
    ["POST", "/v1/messages/count_tokens"],
    ["GET", "/v1/models"],
    ["GET", "/v1/models"],
  ]);
  assertEquals(up.pending, 0);
});

Deno.test("startUpstreams() answers errors in each API's shape with their status and headers", async () => {
  await using up = startUpstreams([
    {
      status: 429,
      headers: { "retry-after": "7" },
      error: "Slow down",
    },
    { status: 429, headers: { "retry-after": "3" }, error: "Slow down" },
    { status: 500, error: { message: "Boom", type: "api_error" } },
    { status: 400, error: "Bad request body" },
  ]);
  const e1 = await assertRejects(
    () => openai(up).chat.completions.create(CHAT),
    OpenAI.RateLimitError,
  ) as InstanceType<typeof OpenAI.APIError>;
  assertEquals(e1.status, 429);
  assertEquals(e1.headers?.get("retry-after"), "7");
  assertEquals(e1.error, {
    message: "Slow down",
    type: "rate_limit_exceeded",
    param: null,
    code: null,
  });
  const e2 = await assertRejects(
    () => anthropic(up).messages.create(MESSAGES),
    Anthropic.RateLimitError,
  ) as AnthropicApiError;
  assertEquals(e2.status, 429);
  assertEquals(e2.headers?.get("retry-after"), "3");
  assertEquals(e2.error, {
    type: "error",
    error: { type: "rate_limit_error", message: "Slow down" },
    request_id: "req_up2",
  });
  const e3 = await assertRejects(
    () => anthropic(up).messages.create(MESSAGES),
    Anthropic.InternalServerError,
  ) as AnthropicApiError;
  assertEquals(e3.status, 500);
  const e4 = await assertRejects(
    () => openai(up).responses.create({ model: "m", input: "x" }),
    OpenAI.BadRequestError,
  ) as InstanceType<typeof OpenAI.APIError>;
  assertEquals(e4.message, "400 Bad request body");
  assertEquals(up.requests.length, 4);
});

Deno.test("startUpstreams() cuts a stream mid-way and every SDK fails instead of finishing", async () => {
  await using up = startUpstreams([
    { text: "Partial answer here", cutAfterChunks: 2 },
    { text: "Partial answer here", cutAfterChunks: 4 },
    { text: "Partial answer here", cutAfterChunks: 3 },
    { text: "Whole body cut", cutAfterChunks: 1 },
  ]);
  await assertRejects(() =>
    openai(up).chat.completions.stream(CHAT).finalChatCompletion()
  );
  await assertRejects(() =>
    openai(up).responses.stream({ model: "m", input: "x" }).finalResponse()
  );
  await assertRejects(() =>
    anthropic(up).messages.stream(MESSAGES).finalMessage()
  );
  await assertRejects(() => openai(up).chat.completions.create(CHAT));
  const ends = await Promise.all(up.requests.map((r) => r.ended));
  assertEquals(ends, ["cut", "cut", "cut", "cut"]);
  assertEquals(up.requests.map((r) => r.sent.length), [2, 4, 3, 1]);
  const body = up.requests[3].response!.body;
  assertEquals(up.requests[3].sent[0], body.slice(0, body.length / 2));
});

Deno.test("startUpstreams() sends a slow stream's chunks before its end", async () => {
  await using up = startUpstreams([{
    text: "one two three four five six",
    chunkSize: 4,
    chunkDelayMs: 30,
  }]);
  const res = await fetch(`${up.openaiBase}/chat/completions`, {
    method: "POST",
    body: JSON.stringify({ ...CHAT, stream: true }),
  });
  const reader = res.body!.getReader();
  const first = await reader.read();
  const ex = up.requests[0];
  assertOk(!first.done);
  assertOk(ex.sent.length < ex.response!.chunks.length);
  let text = new TextDecoder().decode(first.value);
  while (true) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  assertEquals(text, ex.response!.body);
  assertEquals(await ex.ended, "complete");
});

Deno.test("startUpstreams() holds a hung request until the client gives up", async () => {
  await using up = startUpstreams([{ hang: true }]);
  const client = new OpenAI({
    baseURL: up.openaiBase,
    apiKey: KEY,
    maxRetries: 0,
    timeout: 200,
  });
  await assertRejects(
    () => client.chat.completions.create(CHAT),
    OpenAI.APIConnectionTimeoutError,
  );
  assertEquals(await up.requests[0].ended, "client_gone");
  assertEquals(up.requests[0].response, null);
});

Deno.test("startUpstreams() records query strings and beta headers unchanged", async () => {
  await using up = startUpstreams([{ text: "ok" }]);
  const client = new Anthropic({
    baseURL: up.anthropicBase,
    apiKey: KEY,
    maxRetries: 0,
  });
  await client.beta.messages.create({
    ...MESSAGES,
    betas: ["interleaved-thinking-2025-05-14", "files-api-2025-04-14"],
  }, { query: { beta: "true" } });
  const ex = up.requests[0];
  assertEquals(ex.path, "/v1/messages?beta=true");
  assertEquals(
    ex.headers["anthropic-beta"],
    "interleaved-thinking-2025-05-14,files-api-2025-04-14",
  );
  assertEquals(ex.route, "messages");
});

Deno.test("startUpstreams() reads a chunked request body", async () => {
  await using up = startUpstreams([{ text: "ok" }]);
  const text = JSON.stringify(CHAT);
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      const bytes = new TextEncoder().encode(text);
      c.enqueue(bytes.subarray(0, 10));
      c.enqueue(bytes.subarray(10));
      c.close();
    },
  });
  const res = await fetch(`${up.openaiBase}/chat/completions?x=1`, {
    method: "POST",
    body,
  });
  assertEquals((await res.json()).choices[0].message.content, "ok");
  assertEquals(up.requests[0].headers["transfer-encoding"], "chunked");
  assertEquals(up.requests[0].body, text);
  assertEquals(up.requests[0].path, "/v1/chat/completions?x=1");
});

Deno.test("startUpstreams() answers an unknown path 404 and an empty queue 400", async () => {
  await using up = startUpstreams();
  const res = await fetch(`${up.url}/v1/embeddings`, {
    method: "POST",
    body: "{}",
  });
  assertEquals(res.status, 404);
  assertEquals(
    (await res.json()).error.message,
    "No route for POST /v1/embeddings",
  );
  const e = await assertRejects(
    () => openai(up).chat.completions.create(CHAT),
    OpenAI.BadRequestError,
  );
  assertEquals(
    e.message,
    "400 No scripted answer for POST /v1/chat/completions",
  );
});

Deno.test("renderAnswer() renders the same bytes for the same answer and request", () => {
  const answer = { text: "héllo wörld 👋 again", toolCalls: WEATHER };
  for (const route of ["chat", "responses", "messages"] as const) {
    const ctx = {
      route,
      n: 3,
      request: { model: "m", stream: true },
      anthropic: false,
    };
    const a = renderAnswer(answer, ctx);
    assertEquals(renderAnswer(structuredClone(answer), ctx), a);
    assertEquals(a.body, a.chunks.join(""));
    assertOk(a.chunks.length > 8);
  }
  assertEquals(pieces("ab👋cd", 2), ["ab", "👋c", "d"]);
});
