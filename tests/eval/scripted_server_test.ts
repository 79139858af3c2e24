/**
 * The scripted model server through the real `openai` SDK client: recorded
 * answers, usage, scripts side by side, 400s and 404s.
 *
 * @module
 */
import {
  assertEquals,
  assertMatch,
  assertOk,
  assertRejects,
} from "../_assert.ts";
import type { ChatToolCall } from "../../lib/models/chat_types.ts";
import { type Script, scriptFromTau2 } from "../../eval/scripted_model.ts";
import {
  END_TEXT,
  startScriptedModelServer,
} from "../../eval/scripted_model_server.ts";
import { lookup, SIMS, WRITES } from "./_scripted.ts";

function toolsOf(script: Script) {
  const names = new Set(
    script.turns.flatMap((t) => t.tool_calls.map((c) => c.name)),
  );
  return [...names].map((name) => ({
    type: "function" as const,
    function: {
      name,
      description: `The ${name} tool`,
      parameters: { type: "object", properties: {} },
    },
  }));
}

Deno.test("startScriptedModelServer() answers the openai SDK with recorded text, tool calls and usage", async () => {
  const { default: OpenAI } = await import("openai");
  await using server = startScriptedModelServer({
    writes: WRITES,
    now: () => 1_800_000_000_000,
  });
  const sim = SIMS[0];
  const script = scriptFromTau2(sim);
  const baseURL = server.addScript(script);
  assertEquals(baseURL, `${server.url}/s/${sim.id}/v1`);
  assertMatch(server.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  const client = new OpenAI({ baseURL, apiKey: "x", maxRetries: 0 });
  const tools = toolsOf(script);
  // deno-lint-ignore no-explicit-any
  const messages: any[] = [
    { role: "system", content: "You are a retail agent." },
    { role: "assistant", content: script.greeting },
    { role: "user", content: script.users[0] },
  ];
  const first = await client.chat.completions.create({
    model: "scripted",
    messages,
    tools,
  });
  assertEquals(first.object, "chat.completion");
  assertEquals(first.created, 1_800_000_000);
  assertEquals(first.model, "scripted");
  assertEquals(first.choices[0].finish_reason, "stop");
  assertEquals(first.choices[0].message.content, script.turns[0].content);
  assertEquals(first.choices[0].message.tool_calls, undefined);
  assertOk(
    first.usage!.prompt_tokens > 0 && first.usage!.completion_tokens > 0,
  );
  assertEquals(
    first.usage!.total_tokens,
    first.usage!.prompt_tokens + first.usage!.completion_tokens,
  );

  messages.push(first.choices[0].message, {
    role: "user",
    content: script.users[1],
  });
  const second = await client.chat.completions.create({
    model: "scripted",
    messages,
    tools,
  });
  const msg = second.choices[0].message;
  assertEquals(second.choices[0].finish_reason, "tool_calls");
  assertEquals(msg.content, null);
  assertEquals(msg.tool_calls!.length, 1);
  const call = msg.tool_calls![0] as {
    id: string;
    type: string;
    function: { name: string; arguments: string };
  };
  assertEquals(call.type, "function");
  assertEquals(call.function.name, "find_user_id_by_name_zip");
  assertEquals(
    JSON.parse(call.function.arguments),
    script.turns[1].tool_calls[0].arguments,
  );
  assertOk(
    second.usage!.prompt_tokens > first.usage!.prompt_tokens,
    "a longer request has more prompt tokens",
  );

  messages.push(msg, {
    role: "tool",
    tool_call_id: call.id,
    content: "raj_santos_9079",
  });
  const third = await client.chat.completions.create({
    model: "scripted",
    messages,
    tools,
  });
  const next = third.choices[0].message.tool_calls![0] as {
    function: { name: string; arguments: string };
  };
  assertEquals(next.function.name, "get_user_details");
  assertEquals(JSON.parse(next.function.arguments), {
    user_id: "raj_santos_9079",
  });

  const usages = [first, second, third].map((r) => r.usage!);
  assertEquals(server.stats(sim.id), {
    requests: 3,
    prompt_tokens: usages.reduce((s, u) => s + u.prompt_tokens, 0),
    completion_tokens: usages.reduce((s, u) => s + u.completion_tokens, 0),
    skipped_calls: 0,
    skipped_turns: 0,
    repeated_writes: 0,
  });

  // Same script again from the start: same answer, same counts (deterministic); the counts carry on.
  server.resetScript(sim.id);
  const again = await client.chat.completions.create({
    model: "scripted",
    messages: messages.slice(0, 3),
    tools,
  });
  assertEquals(
    again.choices[0].message.content,
    first.choices[0].message.content,
  );
  assertEquals(again.usage, first.usage);
  assertEquals(server.stats(sim.id).requests, 4);
});

Deno.test("startScriptedModelServer() serves scripts side by side and ends a script with ###END###", async () => {
  const { default: OpenAI } = await import("openai");
  await using server = startScriptedModelServer({ writes: WRITES });
  const a = scriptFromTau2(SIMS[2]);
  const b = {
    ...scriptFromTau2(SIMS[3]),
    id: "short one",
    turns: scriptFromTau2(SIMS[3]).turns.slice(0, 1),
  };
  const ask = (script: Script) =>
    new OpenAI({
      baseURL: server.addScript(script),
      apiKey: "x",
      maxRetries: 0,
    }).chat.completions.create({
      model: "scripted",
      messages: [{ role: "user", content: script.users[0] }],
    });
  const [ra, rb] = await Promise.all([ask(a), ask(b)]);
  assertEquals(ra.choices[0].message.content, a.turns[0].content);
  assertEquals(rb.choices[0].message.content, b.turns[0].content);
  const end = await new OpenAI({
    baseURL: `${server.url}/s/short%20one/v1`,
    apiKey: "x",
  }).chat.completions.create({
    model: "scripted",
    messages: [{ role: "user", content: "and?" }],
  });
  assertEquals(end.choices[0].message.content, END_TEXT);
  assertEquals(end.choices[0].finish_reason, "stop");
  assertEquals(server.stats("short one").requests, 2);
  assertEquals(server.stats(a.id).requests, 1);
});

Deno.test("startScriptedModelServer() answers 400 to a malformed request and 404 to an unknown script", async () => {
  const { default: OpenAI } = await import("openai");
  await using server = startScriptedModelServer({ writes: WRITES });
  const script = scriptFromTau2(SIMS[0]);
  const baseURL = server.addScript(script);

  const bad = await assertRejects(() =>
    new OpenAI({ baseURL, apiKey: "x", maxRetries: 0 }).chat.completions.create(
      { model: "scripted", messages: [] },
    )
  ) as Error & { status?: number; param?: string; type?: string };
  assertEquals(bad.status, 400);
  assertEquals(bad.param, "messages");
  assertEquals(bad.type, "invalid_request_error");

  const raw = await fetch(`${baseURL}/chat/completions`, {
    method: "POST",
    body: "{not json",
  });
  assertEquals(raw.status, 400);
  const body = await raw.json();
  assertMatch(body.error.message, /not JSON/);
  assertEquals(body.error.type, "invalid_request_error");

  const noTool = await fetch(`${baseURL}/chat/completions`, {
    method: "POST",
    body: JSON.stringify({
      model: "m",
      messages: [{ role: "tool", content: "x" }],
    }),
  });
  assertEquals(noTool.status, 400);
  assertEquals((await noTool.json()).error.param, "messages[0].tool_call_id");

  const missing = await assertRejects(() =>
    new OpenAI({
      baseURL: `${server.url}/s/nope/v1`,
      apiKey: "x",
      maxRetries: 0,
    }).chat.completions.create({
      model: "scripted",
      messages: [{ role: "user", content: "hi" }],
    })
  ) as Error & { status?: number };
  assertEquals(missing.status, 404);
  assertMatch(missing.message, /No script "nope"/);

  const route = await fetch(`${server.url}/v1/chat/completions`, {
    method: "POST",
    body: "{}",
  });
  assertEquals(route.status, 404);
  await route.body?.cancel();
  assertEquals(
    server.stats(script.id).requests,
    0,
    "refused requests are not counted",
  );
});

Deno.test("startScriptedModelServer() leaves out a recorded read whose result a lookup already showed", async () => {
  const { default: OpenAI } = await import("openai");
  await using server = startScriptedModelServer({ writes: WRITES });
  const sim = SIMS[1];
  const script = scriptFromTau2(sim);
  const client = new OpenAI({
    baseURL: server.addScript(script),
    apiKey: "x",
    maxRetries: 0,
  });
  const shown = lookup(sim, "lookup_1", "find_user_id_by_email", {
    email: "james.kim1995@example.com",
  });
  const [call, result] = shown as unknown as [
    { tool_calls: ChatToolCall[] },
    { tool_call_id: string; content: string },
  ];
  const messages = [
    { role: "user" as const, content: script.users[0] },
    { role: "assistant" as const, content: script.turns[0].content },
    { role: "user" as const, content: script.users[1] },
    {
      role: "assistant" as const,
      content: null,
      tool_calls: call.tool_calls.map((c) => ({
        id: c.id,
        type: "function" as const,
        function: { name: c.name, arguments: c.raw_arguments },
      })),
    },
    {
      role: "tool" as const,
      tool_call_id: result.tool_call_id,
      content: result.content,
    },
  ];
  server.resetScript(script.id);
  await client.chat.completions.create({
    model: "scripted",
    messages: messages.slice(0, 1),
  });
  const r = await client.chat.completions.create({
    model: "scripted",
    messages,
  });
  const next = r.choices[0].message.tool_calls![0] as {
    function: { name: string; arguments: string };
  };
  assertEquals(next.function.name, "get_user_details");
  assertEquals(JSON.parse(next.function.arguments), {
    user_id: "james_kim_7213",
  });
  const stats = server.stats(script.id);
  assertEquals([
    stats.requests,
    stats.skipped_calls,
    stats.skipped_turns,
    stats.repeated_writes,
  ], [2, 1, 1, 0]);
});
