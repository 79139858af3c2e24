/**
 * The model gateway as the official clients see it: what the upstream sends
 * reaches the client unchanged (whole bodies byte for byte, streams event
 * for event), what the client sends reaches the upstream unchanged, and the
 * client's key is never written anywhere.
 *
 * @module
 */
import OpenAI from "openai";
import { assertEquals, assertOk, assertRejects } from "../_assert.ts";
import { parseSse } from "./_upstreams.ts";
import { assertKeyNowhere, KEY, startGateway } from "./_gateway.ts";
import { Anthropic, type AnthropicApiError } from "./_anthropic_sdk.ts";

const CALLS = [
  { name: "get_weather", arguments: { city: "Paris", unit: "celsius" } },
  { name: "get_time", arguments: { timezone: "Europe/Paris" } },
];
const CHAT = {
  model: "gpt-up",
  messages: [{ role: "user" as const, content: "Weather and time in Paris?" }],
};
const MESSAGES = {
  model: "claude-up",
  max_tokens: 256,
  messages: [{ role: "user", content: "Weather and time in Paris?" }],
};

Deno.test("the model gateway relays a chat completion byte for byte and forwards the request unchanged", async () => {
  await using rig = await startGateway();
  rig.up.push({ text: "Checking.", toolCalls: CALLS });
  const data = await rig.openai().chat.completions.create(CHAT, {
    query: { "api-version": "2025-01-01" },
  });
  const ex = rig.up.requests[0];
  const got = rig.tap.responses[0];
  assertEquals(await got.body, ex.response!.body);
  assertEquals(got.status, 200);
  assertEquals(got.headers.get("x-request-id"), "req_up1");
  assertEquals(
    data.choices[0].message.tool_calls?.map((c) =>
      c.type === "function" ? [c.id, c.function.name] : []
    ),
    [["call_1_0", "get_weather"], ["call_1_1", "get_time"]],
  );
  assertEquals(ex.path, "/v1/chat/completions?api-version=2025-01-01");
  assertEquals(ex.body, got.request);
  assertEquals(ex.headers.authorization, `Bearer ${KEY}`);
  assertEquals(ex.headers["openai-organization"], "org-gw");
  assertEquals(ex.headers["x-harness-capture"], undefined);
  await assertKeyNowhere(rig);
});

Deno.test("the model gateway streams a chat completion event for event: argument deltas, usage in the last chunk", async () => {
  await using rig = await startGateway();
  rig.up.push({
    text: "Checking both.",
    toolCalls: CALLS,
    usage: { input_tokens: 40, output_tokens: 9 },
  });
  const stream = rig.openai().chat.completions.stream({
    ...CHAT,
    stream_options: { include_usage: true },
  });
  const deltas: Record<number, string[]> = { 0: [], 1: [] };
  stream.on(
    "tool_calls.function.arguments.delta",
    (e) => deltas[e.index].push(e.arguments_delta),
  );
  const final = await stream.finalChatCompletion();
  const ex = rig.up.requests[0];
  const got = parseSse(await rig.tap.responses[0].body as string);
  assertEquals(got, parseSse(ex.response!.body));
  assertEquals(got.at(-1)?.data, "[DONE]");
  const last = JSON.parse(got.at(-2)!.data);
  assertEquals(last.choices, []);
  assertEquals(last.usage.prompt_tokens, 40);
  assertEquals(final.usage?.completion_tokens, 9);
  assertEquals(deltas[0].join(""), '{"city":"Paris","unit":"celsius"}');
  assertEquals(deltas[1].join(""), '{"timezone":"Europe/Paris"}');
  assertOk(deltas[0].length > 1 && deltas[1].length > 1);
  assertEquals(
    final.choices[0].message.tool_calls?.map((c) =>
      c.type === "function" ? c.function.arguments : ""
    ),
    ['{"city":"Paris","unit":"celsius"}', '{"timezone":"Europe/Paris"}'],
  );
  assertEquals(ex.body, rig.tap.responses[0].request);
  await assertKeyNowhere(rig);
});

Deno.test("the model gateway relays the Responses API whole and streamed", async () => {
  await using rig = await startGateway();
  rig.up.push(
    { text: "Here.", toolCalls: CALLS },
    { text: "Here, streamed.", toolCalls: CALLS, usage: { input_tokens: 21 } },
  );
  const client = rig.openai();
  const whole = await client.responses.create({
    model: "gpt-up",
    input: "Weather?",
  });
  assertEquals(
    await rig.tap.responses[0].body,
    rig.up.requests[0].response!.body,
  );
  assertEquals(whole.output_text, "Here.");
  const stream = client.responses.stream({
    model: "gpt-up",
    input: "Weather?",
  });
  const types: string[] = [];
  for await (const e of stream) types.push(e.type);
  const final = await stream.finalResponse();
  const got = parseSse(await rig.tap.responses[1].body as string);
  assertEquals(got, parseSse(rig.up.requests[1].response!.body));
  assertEquals(got.map((e) => e.event), types);
  assertEquals(final.usage?.input_tokens, 21);
  assertEquals(
    final.output.flatMap((o) =>
      o.type === "function_call" ? [[o.call_id, o.arguments]] : []
    ),
    [
      ["call_2_0", '{"city":"Paris","unit":"celsius"}'],
      ["call_2_1", '{"timezone":"Europe/Paris"}'],
    ],
  );
  assertEquals(rig.up.requests.map((r) => r.path), [
    "/v1/responses",
    "/v1/responses",
  ]);
  await assertKeyNowhere(rig);
});

Deno.test("the model gateway relays Anthropic Messages whole and streamed, with beta headers and query", async () => {
  await using rig = await startGateway();
  rig.up.push(
    {
      text: "Let me check.",
      toolCalls: CALLS,
      usage: { input_tokens: 50, cached_tokens: 30 },
    },
    { text: "Let me check.", toolCalls: CALLS },
  );
  const client = rig.anthropic();
  const whole = await client.beta.messages.create({
    ...MESSAGES,
    betas: ["files-api-2025-04-14"],
  }, { query: { beta: "true" } });
  assertEquals(
    await rig.tap.responses[0].body,
    rig.up.requests[0].response!.body,
  );
  assertEquals(whole.usage.cache_read_input_tokens, 30);
  const ex = rig.up.requests[0];
  assertEquals(ex.path, "/v1/messages?beta=true");
  assertEquals(ex.headers["anthropic-beta"], "files-api-2025-04-14");
  assertEquals(ex.headers.authorization, `Bearer ${KEY}`);
  assertOk(ex.headers["anthropic-version"]);
  assertEquals(ex.body, rig.tap.responses[0].request);
  const partial: string[] = [];
  const stream = client.messages.stream(MESSAGES).on(
    "inputJson",
    (p) => partial.push(p),
  );
  const final = await stream.finalMessage();
  const got = parseSse(await rig.tap.responses[1].body as string);
  assertEquals(got, parseSse(rig.up.requests[1].response!.body));
  assertOk(got.some((e) => e.event === "ping"));
  assertEquals(partial.length, 9);
  assertEquals(
    final.content.flatMap((b) => b.type === "tool_use" ? [b.input] : []),
    [{ city: "Paris", unit: "celsius" }, { timezone: "Europe/Paris" }],
  );
  await assertKeyNowhere(rig);
});

Deno.test("the model gateway passes an x-api-key and anthropic-version through unchanged", async () => {
  await using rig = await startGateway();
  rig.up.push({ text: "ok" });
  const res = await fetch(`${rig.server.url}/v1/messages`, {
    method: "POST",
    headers: {
      ...rig.headers,
      "x-api-key": KEY,
      "anthropic-version": "2023-06-01",
      "anthropic-beta": "prompt-caching-2024-07-31",
      "content-type": "application/json",
    },
    body: JSON.stringify(MESSAGES),
  });
  assertEquals(await res.text(), rig.up.requests[0].response!.body);
  const ex = rig.up.requests[0];
  assertEquals(ex.headers["x-api-key"], KEY);
  assertEquals(ex.headers["anthropic-version"], "2023-06-01");
  assertEquals(ex.headers["anthropic-beta"], "prompt-caching-2024-07-31");
  assertEquals(ex.body, JSON.stringify(MESSAGES));
  await assertKeyNowhere(rig);
});

Deno.test("the model gateway passes count_tokens and both model lists through", async () => {
  await using rig = await startGateway();
  rig.up.push({ route: "count_tokens", usage: { input_tokens: 77 } });
  const count = await rig.anthropic().messages.countTokens({
    model: "claude-up",
    messages: MESSAGES.messages,
  });
  assertEquals(count, { input_tokens: 77 });
  const claude: string[] = [];
  for await (const m of rig.anthropic().models.list()) claude.push(m.id);
  assertEquals(claude, ["claude-up-1", "claude-up-2"]);
  const gpt: string[] = [];
  for await (const m of rig.openai().models.list()) gpt.push(m.id);
  assertEquals(gpt, ["gpt-up-1", "gpt-up-2"]);
  assertEquals(
    rig.up.requests.map((r) => [r.method, r.path.split("?")[0], r.route]),
    [
      ["POST", "/v1/messages/count_tokens", "count_tokens"],
      ["GET", "/v1/models", "models"],
      ["GET", "/v1/models", "models"],
    ],
  );
  for (const [i, r] of rig.up.requests.entries()) {
    assertEquals(await rig.tap.responses[i].body, r.response!.body);
  }
  await assertKeyNowhere(rig);
});

Deno.test("the model gateway passes the upstream's errors through: status, retry-after, body", async () => {
  await using rig = await startGateway();
  rig.up.push(
    { status: 429, headers: { "retry-after": "7" }, error: "Slow down" },
    { status: 429, headers: { "retry-after": "3" }, error: "Slow down" },
    { status: 500, error: "Boom" },
    { status: 400, error: "Bad body" },
  );
  const e1 = await assertRejects(
    () => rig.openai().chat.completions.create(CHAT),
    OpenAI.RateLimitError,
  ) as InstanceType<typeof OpenAI.APIError>;
  assertEquals(e1.status, 429);
  assertEquals(e1.headers?.get("retry-after"), "7");
  const e2 = await assertRejects(
    () => rig.anthropic().messages.create(MESSAGES),
    Anthropic.RateLimitError,
  ) as AnthropicApiError;
  assertEquals(e2.status, 429);
  assertEquals(e2.headers?.get("retry-after"), "3");
  assertEquals(e2.error, {
    type: "error",
    error: { type: "rate_limit_error", message: "Slow down" },
    request_id: "req_up2",
  });
  await assertRejects(
    () => rig.anthropic().messages.stream(MESSAGES).finalMessage(),
    Anthropic.InternalServerError,
  );
  await assertRejects(
    () => rig.openai().responses.create({ model: "m", input: "x" }),
    OpenAI.BadRequestError,
  );
  assertEquals(rig.up.requests.length, 4);
  for (const [i, r] of rig.up.requests.entries()) {
    assertEquals(rig.tap.responses[i].status, r.response!.status);
    assertEquals(await rig.tap.responses[i].body, r.response!.body);
  }
  await assertKeyNowhere(rig);
});

Deno.test("the model gateway makes the client fail, not hang, when the upstream cuts a stream", async () => {
  await using rig = await startGateway();
  rig.up.push(
    { text: "A partial answer", toolCalls: CALLS, cutAfterChunks: 4 },
    { text: "A partial answer", toolCalls: CALLS, cutAfterChunks: 5 },
    { text: "A partial answer", toolCalls: CALLS, cutAfterChunks: 6 },
  );
  for (
    const run of [
      () => rig.openai().chat.completions.stream(CHAT).finalChatCompletion(),
      () =>
        rig.openai().responses.stream({ model: "m", input: "x" })
          .finalResponse(),
      () => rig.anthropic().messages.stream(MESSAGES).finalMessage(),
    ]
  ) {
    const err = await assertRejects(run);
    assertOk(
      !/timed? ?out/i.test(err.message),
      `expected a broken stream, got ${err.message}`,
    );
  }
  assertEquals(
    await Promise.all(rig.up.requests.map((r) => r.ended)),
    ["cut", "cut", "cut"],
  );
  await assertKeyNowhere(rig);
});

Deno.test("the model gateway relays a slow stream's chunks before its end", async () => {
  await using rig = await startGateway();
  rig.up.push({
    text: "one two three four five six seven",
    chunkSize: 4,
    chunkDelayMs: 40,
  });
  const res = await fetch(`${rig.bases.openaiBase}/chat/completions`, {
    method: "POST",
    headers: { ...rig.headers, authorization: `Bearer ${KEY}` },
    body: JSON.stringify({ ...CHAT, stream: true }),
  });
  assertEquals(
    res.headers.get("content-type"),
    "text/event-stream; charset=utf-8",
  );
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const first = await reader.read();
  const ex = rig.up.requests[0];
  assertOk(!first.done && first.value.startsWith("data: "));
  assertOk(
    ex.sent.length < ex.response!.chunks.length,
    "the first chunk came only after the upstream had sent everything",
  );
  let text = first.value!;
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    text += r.value;
  }
  assertEquals(text, ex.response!.body);
});

Deno.test("the model gateway answers 504 in the API's shape when the upstream never answers", async () => {
  await using rig = await startGateway({
    gateway: { upstreamTimeoutMs: 300 },
  });
  rig.up.push({ hang: true }, { hang: true });
  const e1 = await assertRejects(
    () => rig.openai().chat.completions.create(CHAT),
    OpenAI.APIError,
  ) as InstanceType<typeof OpenAI.APIError>;
  assertEquals(e1.status, 504);
  const e2 = await assertRejects(
    () => rig.anthropic().messages.create(MESSAGES),
    Anthropic.APIError,
  ) as AnthropicApiError;
  assertEquals(e2.status, 504);
  assertEquals((e2.error as { type: string }).type, "error");
  assertEquals(
    await Promise.all(rig.up.requests.map((r) => r.ended)),
    ["client_gone", "client_gone"],
  );
});

Deno.test("the model gateway lets go of the upstream when the client gives up", async () => {
  await using rig = await startGateway();
  rig.up.push({ hang: true });
  await assertRejects(
    () => rig.openai({ timeout: 300 }).chat.completions.create(CHAT),
    OpenAI.APIConnectionTimeoutError,
  );
  assertEquals(await rig.up.requests[0].ended, "client_gone");
});
