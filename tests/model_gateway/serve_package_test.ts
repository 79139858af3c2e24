/**
 * A compiled package served at the model API (issue 33): the lookups due
 * now are answered by the gateway itself, and each official client takes
 * the answer for a normal tool call — OpenAI Chat Completions and the
 * Responses API (whole input) through the `openai` SDK, Anthropic Messages
 * through `@anthropic-ai/sdk`, whole and streamed — with
 * `x-harness-served: package`, zero usage, and no request to the upstream.
 * The client runs the call and sends its result back; the package reads
 * it from that wire and serves the next lookup. What the package answered
 * is recorded like any answer, with zero usage and `served_by`.
 *
 * @module
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { GatewayDriver } from "../../lib/forms/agent/gateway_driver.ts";
import type { TraceEvent } from "../../lib/trace/mod.ts";
import { RetailEnv } from "../../eval/envs/tau2/mod.ts";
import { ofKind, startGateway } from "./_gateway.ts";
import type { AnthropicBlock } from "./_anthropic_sdk.ts";
import { RETAIL_CHAT_TOOLS } from "./_retail_agent.ts";
import {
  ANTHROPIC_TOOLS,
  RESPONSES_TOOLS,
  RETAIL_INSTRUCTIONS,
  servedRetail,
} from "./_served_retail.ts";

const retail = servedRetail();
const EMAIL = "sofia.li7352@example.com";
const USER_ID = "sofia_li_9219";
const ASK =
  `Hi, my email is ${EMAIL}. I would like to cancel an order I no longer need.`;
const FIRST = { name: "find_user_id_by_email", arguments: { email: EMAIL } };
const SECOND = { name: "get_user_details", arguments: { user_id: USER_ID } };

async function servedRig(capture: string) {
  return await startGateway({
    capture,
    gateway: { packages: { "": new GatewayDriver(retail.pkg) } },
  });
}

/** The package's answers as recorded: `model.responded` with `served_by`. */
function servedAnswers(events: TraceEvent[]) {
  return ofKind(events, "model.responded").filter((e) =>
    e.payload.served_by !== undefined && e.payload.served_by !== null
  );
}

/** What the gateway says of the package's answers on `/health`. */
async function health(url: string) {
  const h = await (await fetch(`${url}/health`)).json();
  return h.model_gateway;
}

Deno.test("a package's lookup reaches the openai client as a Chat Completions tool call, whole and streamed, with no upstream request", async () => {
  await using rig = await servedRig("cap_served_chat");
  const env = new RetailEnv(retail.db);
  const client = rig.openai();
  const messages: Parameters<
    typeof client.chat.completions.create
  >[0]["messages"] = [
    { role: "system", content: RETAIL_INSTRUCTIONS },
    { role: "user", content: ASK },
  ];
  const { data, response } = await client.chat.completions.create({
    model: "gpt-agent",
    messages,
    tools: RETAIL_CHAT_TOOLS,
  }).withResponse();
  assertEquals(response.headers.get("x-harness-served"), "package");
  assertEquals(
    response.headers.get("x-harness-package"),
    `retail@${retail.pkg.digest}`,
  );
  const m = data.choices[0].message;
  assertEquals(data.choices[0].finish_reason, "tool_calls");
  assertEquals(data.usage?.total_tokens, 0);
  assertEquals(data.model, "gpt-agent");
  const calls = (m.tool_calls ?? []).flatMap((c) =>
    c.type === "function"
      ? [{ name: c.function.name, arguments: JSON.parse(c.function.arguments) }]
      : []
  );
  assertEquals(calls, [FIRST]);

  // The agent runs the call and sends the result back; streamed this time.
  messages.push({
    role: "assistant",
    content: m.content,
    tool_calls: m.tool_calls,
  });
  messages.push({
    role: "tool",
    tool_call_id: m.tool_calls![0].id,
    content: env.respond(FIRST.name, FIRST.arguments),
  });
  assertEquals(messages.at(-1)!.content, USER_ID);
  const stream = client.chat.completions.stream({
    model: "gpt-agent",
    messages,
    tools: RETAIL_CHAT_TOOLS,
    stream_options: { include_usage: true },
  });
  const final = await stream.finalChatCompletion();
  const tapped = rig.tap.responses.at(-1)!;
  assertEquals(tapped.headers.get("x-harness-served"), "package");
  assertOk(
    (tapped.headers.get("content-type") ?? "").startsWith("text/event-stream"),
  );
  assertOk((await tapped.body as string).trimEnd().endsWith("data: [DONE]"));
  assertEquals(final.choices[0].finish_reason, "tool_calls");
  assertEquals(final.usage?.prompt_tokens, 0);
  assertEquals(
    final.choices[0].message.tool_calls?.map((c) =>
      c.type === "function"
        ? { name: c.function.name, arguments: JSON.parse(c.function.arguments) }
        : null
    ),
    [SECOND],
  );

  assertEquals(rig.up.requests.length, 0);
  const h = await health(rig.server.url);
  assertEquals(h.served, 2);
  assertEquals(h.passed_through, 0);
  assertEquals(h.packages, { "/v1": `retail@${retail.pkg.digest}` });
  const served = servedAnswers(await rig.events());
  assertEquals(served.length, 2);
  for (const e of served) {
    assertEquals(e.payload.served_by, `retail@${retail.pkg.digest}`);
    const usage = (e.payload.response as { usage: Record<string, unknown> })
      .usage;
    assertEquals(usage.input_tokens, 0);
    assertEquals(usage.output_tokens, 0);
  }
  // The calls the package made are the conversation's calls, as the
  // model's would be: started, then answered by the agent's result.
  const started = ofKind(await rig.events(), "tool.call.started").map((e) =>
    (e.payload.tool as { host_name: string }).host_name
  );
  assertEquals(started, [FIRST.name, SECOND.name]);
  // Each request says the package served it; each answer names the one
  // episode both were recorded under.
  const requested = ofKind(await rig.events(), "model.requested");
  assertEquals(requested.map((e) => e.payload.package), [
    { id: `retail@${retail.pkg.digest}`, outcome: "served" },
    { id: `retail@${retail.pkg.digest}`, outcome: "served" },
  ]);
  assertEquals(
    [
      response.headers.get("x-harness-episode"),
      tapped.headers.get("x-harness-episode"),
    ],
    requested.map((e) => e.episode_id),
  );
  assertEquals(new Set(requested.map((e) => e.episode_id)).size, 1);
});

Deno.test("a package's lookup reaches the openai client through the Responses API (whole input), whole and streamed, with no upstream request", async () => {
  await using rig = await servedRig("cap_served_responses");
  const env = new RetailEnv(retail.db);
  const client = rig.openai();
  const input: Parameters<typeof client.responses.create>[0]["input"] = [
    { role: "user", content: ASK },
  ];
  const { data, response } = await client.responses.create({
    model: "gpt-agent",
    instructions: RETAIL_INSTRUCTIONS,
    input,
    tools: RESPONSES_TOOLS,
  }).withResponse();
  assertEquals(response.headers.get("x-harness-served"), "package");
  assertEquals(data.status, "completed");
  assertEquals(data.usage?.total_tokens, 0);
  const calls = data.output.flatMap((o) =>
    o.type === "function_call"
      ? [{ name: o.name, arguments: JSON.parse(o.arguments) }]
      : []
  );
  assertEquals(calls, [FIRST]);
  assertEquals(data.output_text, "");

  // The whole input again, with the call and its output: streamed.
  const call = data.output.find((o) => o.type === "function_call")!;
  if (call.type !== "function_call") throw new Error("not a function call");
  input.push(call, {
    type: "function_call_output",
    call_id: call.call_id,
    output: env.respond(FIRST.name, FIRST.arguments),
  });
  const stream = client.responses.stream({
    model: "gpt-agent",
    instructions: RETAIL_INSTRUCTIONS,
    input,
    tools: RESPONSES_TOOLS,
  });
  const types: string[] = [];
  for await (const e of stream) types.push(e.type);
  const final = await stream.finalResponse();
  assertEquals(types[0], "response.created");
  assertEquals(types.at(-1), "response.completed");
  assertEquals(
    rig.tap.responses.at(-1)!.headers.get("x-harness-served"),
    "package",
  );
  assertEquals(
    final.output.flatMap((o) =>
      o.type === "function_call"
        ? [{ name: o.name, arguments: JSON.parse(o.arguments) }]
        : []
    ),
    [SECOND],
  );
  assertEquals(final.usage?.input_tokens, 0);
  assertEquals(rig.up.requests.length, 0);
  assertEquals((await health(rig.server.url)).served, 2);
  assertEquals(servedAnswers(await rig.events()).length, 2);
});

Deno.test("a package's lookup reaches the Anthropic SDK as a tool_use block, whole and streamed, with no upstream request", async () => {
  await using rig = await servedRig("cap_served_messages");
  const env = new RetailEnv(retail.db);
  const client = rig.anthropic();
  const params = {
    model: "claude-agent",
    max_tokens: 1024,
    system: RETAIL_INSTRUCTIONS,
    tools: ANTHROPIC_TOOLS,
  };
  const messages: { role: string; content: unknown }[] = [
    { role: "user", content: ASK },
  ];
  const { data, response } = await client.messages.create({
    ...params,
    messages,
  }).withResponse();
  assertEquals(response.headers.get("x-harness-served"), "package");
  assertEquals(data.stop_reason, "tool_use");
  assertEquals(data.usage.input_tokens, 0);
  assertEquals(data.usage.output_tokens, 0);
  const uses = (blocks: AnthropicBlock[]) =>
    blocks.flatMap((b) =>
      b.type === "tool_use" ? [{ name: b.name, arguments: b.input }] : []
    );
  assertEquals(uses(data.content), [FIRST]);

  const use = data.content.find((b) => b.type === "tool_use")!;
  if (use.type !== "tool_use") throw new Error("not a tool_use block");
  messages.push({ role: "assistant", content: data.content }, {
    role: "user",
    content: [{
      type: "tool_result",
      tool_use_id: use.id,
      content: env.respond(FIRST.name, FIRST.arguments),
    }],
  });
  const seen: string[] = [];
  const final = await client.messages.stream({ ...params, messages })
    .on("streamEvent", (e) => seen.push(e.type)).finalMessage();
  assertEquals(seen[0], "message_start");
  assertEquals(seen.at(-1), "message_stop");
  assertEquals(
    rig.tap.responses.at(-1)!.headers.get("x-harness-served"),
    "package",
  );
  assertEquals(final.stop_reason, "tool_use");
  assertEquals(uses(final.content), [SECOND]);
  assertEquals(rig.up.requests.length, 0);
  assertEquals((await health(rig.server.url)).served, 2);
  assertEquals(servedAnswers(await rig.events()).length, 2);
});

Deno.test("a package named at /p/<name>/v1 serves there and leaves /v1 to the upstream", async () => {
  await using rig = await startGateway({
    capture: "cap_served_named",
    gateway: { packages: { retail: new GatewayDriver(retail.pkg) } },
  });
  const body = JSON.stringify({
    model: "gpt-agent",
    messages: [{ role: "user", content: ASK }],
    tools: RETAIL_CHAT_TOOLS,
  });
  const post = (path: string) =>
    fetch(`${rig.server.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...rig.headers },
      body,
    });
  const named = await post("/p/retail/v1/chat/completions");
  assertEquals(named.headers.get("x-harness-served"), "package");
  const json = await named.json();
  assertEquals(
    json.choices[0].message.tool_calls[0].function.name,
    FIRST.name,
  );
  assertEquals(rig.up.requests.length, 0);
  rig.up.push({ text: "Hello from the model." });
  const plain = await post("/v1/chat/completions");
  assertEquals(plain.headers.get("x-harness-served"), null);
  assertEquals(await plain.text(), rig.up.requests[0].response!.body);
  assertEquals(rig.up.requests[0].body, body);
  const missing = await post("/p/nope/v1/chat/completions");
  assertEquals(missing.status, 404);
  const error = (await missing.json()).error;
  assertEquals(error.type, "not_found_error");
  assertOk(error.message.startsWith('No package named "nope"'), error.message);
  assertEquals(rig.up.requests.length, 1);
});

Deno.test("a package answers with its lookups only as the request's tool_choice and parallel-call settings allow", async () => {
  await using rig = await servedRig("cap_served_choice");
  // The user names an order: two lookups are due at once.
  const ask = `${ASK} It is order #W8855135.`;
  const chat = (extra: Record<string, unknown>) =>
    fetch(`${rig.server.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", ...rig.headers },
      body: JSON.stringify({
        model: "gpt-agent",
        messages: [{ role: "user", content: ask }],
        tools: RETAIL_CHAT_TOOLS,
        ...extra,
      }),
    });
  const messages = (toolChoice: Record<string, unknown>) =>
    fetch(`${rig.server.url}/v1/messages`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "anthropic-version": "2023-06-01",
        ...rig.headers,
      },
      body: JSON.stringify({
        model: "claude-agent",
        max_tokens: 256,
        messages: [{ role: "user", content: ask }],
        tools: ANTHROPIC_TOOLS,
        tool_choice: toolChoice,
      }),
    });
  const chatCalls = async (res: Response) => {
    assertEquals(res.headers.get("x-harness-served"), "package");
    const m = (await res.json()).choices[0].message;
    return m.tool_calls.map((c: { function: { name: string } }) =>
      c.function.name
    );
  };
  const messageCalls = async (res: Response) => {
    assertEquals(res.headers.get("x-harness-served"), "package");
    return (await res.json()).content.map((b: { name: string }) => b.name);
  };
  const both = [FIRST.name, "get_order_details"];
  // An API answers `tool_choice: "none"` in words and a forced tool with
  // that tool: the package leaves those to the model. With parallel calls
  // off it answers one call at a time.
  const forwarded = async (res: Response) => {
    assertEquals(res.headers.get("x-harness-served"), null);
    await res.body?.cancel();
  };
  rig.up.push({ text: "one" }, { text: "two" }, { text: "three" });
  await forwarded(await chat({ tool_choice: "none" }));
  await forwarded(
    await chat({
      tool_choice: {
        type: "function",
        function: { name: "list_all_product_types" },
      },
    }),
  );
  assertEquals(
    await chatCalls(await chat({ parallel_tool_calls: false })),
    both.slice(0, 1),
  );
  assertEquals(await chatCalls(await chat({})), both);
  await forwarded(await messages({ type: "none" }));
  assertEquals(
    await messageCalls(
      await messages({ type: "auto", disable_parallel_tool_use: true }),
    ),
    both.slice(0, 1),
  );
  assertEquals(
    await messageCalls(await messages({ type: "tool", name: FIRST.name })),
    both.slice(0, 1),
  );
  assertEquals(rig.up.requests.length, 3);
});
