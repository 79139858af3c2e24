/**
 * The scripted model: scripts from real τ² retail simulations (the vendored
 * slice), the walker replaying them, and the server through the real
 * `openai` SDK client.
 *
 * @module
 */
import {
  assertEquals,
  assertMatch,
  assertOk,
  assertRejects,
} from "../_assert.ts";
import type { ChatMessage, ChatToolCall } from "../../lib/models/chat_types.ts";
import { canonicalJson } from "../../lib/trace/canonical_json.ts";
import {
  type Script,
  scriptFromTau2,
  type ScriptTurn,
  ScriptWalker,
  type Tau2Simulation,
} from "../../lib/eval/scripted_model.ts";
import {
  END_TEXT,
  startScriptedModelServer,
} from "../../lib/eval/scripted_model_server.ts";
import {
  countTokens,
  TOKEN_ENCODING,
  TokenCounter,
} from "../../lib/eval/token_count.ts";

const SLICE = new URL("../../fixtures/tau2_retail_slice.json", import.meta.url);
const SIMS: Tau2Simulation[] = JSON.parse(await Deno.readTextFile(SLICE))
  .simulations;

/** τ² retail's state-changing tools (write, plus the hand-over). */
const WRITES = new Set([
  "cancel_pending_order",
  "exchange_delivered_order_items",
  "modify_pending_order_address",
  "modify_pending_order_items",
  "modify_pending_order_payment",
  "modify_user_address",
  "return_delivered_order_items",
  "transfer_to_human_agents",
]);

const key = (name: string, args: unknown) => `${name} ${canonicalJson(args)}`;

/** The recorded tool results of a simulation, by call, in order. */
function recordedResults(
  sim: Tau2Simulation,
): { key: string; content: string }[] {
  const calls = new Map<string, string>();
  const out: { key: string; content: string }[] = [];
  for (const m of sim.messages as unknown as Array<Record<string, unknown>>) {
    for (
      const c of (m.tool_calls ?? []) as {
        id: string;
        name: string;
        arguments: unknown;
      }[]
    ) {
      calls.set(c.id, key(c.name, c.arguments));
    }
    if (m.role === "tool") {
      out.push({
        key: calls.get(m.id as string)!,
        content: m.content as string,
      });
    }
  }
  return out;
}

/** What a driver does between model requests. */
interface Hooks {
  /** Extra messages (lookups) added before each model request. */
  before?: (messages: ChatMessage[], userIndex: number) => void;
  /** The result of a call (default: the recorded one). */
  result?: (call: ChatToolCall, recorded: string) => string;
}

/**
 * Drive a walker the way the benchmark does: the recorded users in order,
 * model requests until a text answer, tool calls answered with the
 * recorded results. Returns every answer.
 */
function replay(
  sim: Tau2Simulation,
  walker: ScriptWalker,
  hooks: Hooks = {},
): { content: string | null; tool_calls: ChatToolCall[] }[] {
  const script = scriptFromTau2(sim);
  const results = recordedResults(sim);
  const used = new Set<number>();
  const messages: ChatMessage[] = [{ role: "system", content: "policy" }];
  if (script.greeting) {
    messages.push({ role: "assistant", content: script.greeting });
  }
  const answers: { content: string | null; tool_calls: ChatToolCall[] }[] = [];
  script.users.forEach((u, i) => {
    messages.push({ role: "user", content: u });
    for (let guard = 0; guard < 50; guard++) {
      hooks.before?.(messages, i);
      const step = walker.next(messages);
      if ("exhausted" in step) return;
      answers.push(step);
      messages.push({
        role: "assistant",
        content: step.content,
        tool_calls: step.tool_calls,
      });
      if (!step.tool_calls.length) return;
      for (const c of step.tool_calls) {
        const k = key(c.name, c.arguments);
        const at = results.findIndex((r, j) => !used.has(j) && r.key === k);
        if (at >= 0) used.add(at);
        const recorded = at >= 0 ? results[at].content : "Error: not recorded";
        messages.push({
          role: "tool",
          tool_call_id: c.id,
          name: c.name,
          content: hooks.result ? hooks.result(c, recorded) : recorded,
        });
      }
    }
  });
  return answers;
}

const asTurn = (
  a: { content: string | null; tool_calls: ChatToolCall[] },
): ScriptTurn => ({
  content: a.content,
  tool_calls: a.tool_calls.map((c) => ({
    name: c.name,
    arguments: c.arguments!,
  })),
});

/** A lookup shown as the model's own call, with its recorded result. */
function lookup(
  sim: Tau2Simulation,
  id: string,
  name: string,
  args: Record<string, unknown>,
): ChatMessage[] {
  const r = recordedResults(sim).find((x) => x.key === key(name, args));
  assertOk(r, `the simulation recorded ${name}`);
  return [
    {
      role: "assistant",
      content: null,
      tool_calls: [{
        id,
        name,
        arguments: args,
        raw_arguments: JSON.stringify(args),
      }],
    },
    { role: "tool", tool_call_id: id, name, content: r.content },
  ];
}

Deno.test("scriptFromTau2() keeps the greeting, the users and the assistant turns in order", () => {
  const sim = SIMS[0];
  const script = scriptFromTau2(sim);
  assertEquals(script.id, sim.id);
  assertEquals(script.greeting, "Hi! How can I help you today?");
  const users = sim.messages.filter((m) => m.role === "user").map((m) =>
    m.content
  );
  assertEquals(script.users, users);
  assertEquals(
    script.turns.length,
    sim.messages.filter((m) => m.role === "assistant").length - 1,
  );
  assertEquals(script.turns[1], {
    content: null,
    tool_calls: [{
      name: "find_user_id_by_name_zip",
      arguments: { first_name: "Raj", last_name: "Santos", zip: "98157" },
    }],
  });
  assertEquals(script.turns[5].tool_calls.map((c) => c.arguments.order_id), [
    "#W4680753",
    "#W1630030",
  ]);
  assertMatch(script.turns[0].content!, /verify your account/);
});

Deno.test("ScriptWalker replays every slice simulation exactly when fed the recorded results", () => {
  let turns = 0;
  for (const sim of SIMS) {
    const script = scriptFromTau2(sim);
    const walker = new ScriptWalker(script, { writes: WRITES });
    const answers = replay(sim, walker);
    assertEquals(answers.map(asTurn), script.turns, `simulation ${sim.id}`);
    assertEquals(walker.stats.skipped_calls, 0, `simulation ${sim.id}`);
    const ids = answers.flatMap((a) => a.tool_calls.map((c) => c.id));
    assertEquals(new Set(ids).size, ids.length, "tool call ids are unique");
    assertEquals(walker.next([{ role: "user", content: "more?" }]), {
      exhausted: true,
    });
    turns += script.turns.length;
  }
  // Simulation 9 reads the same products again and again with no write between: replayed as is.
  assertOk(turns > 300, `${turns} turns replayed`);
});

Deno.test("ScriptWalker skips a read the request already holds, and a turn left empty", () => {
  const sim = SIMS[1];
  const script = scriptFromTau2(sim);
  const walker = new ScriptWalker(script, { writes: WRITES });
  const answers = replay(sim, walker, {
    before(messages, userIndex) {
      if (userIndex !== 1 || messages.some((m) => m.role === "tool")) return;
      messages.push(
        ...lookup(sim, "lookup_1", "find_user_id_by_email", {
          email: "james.kim1995@example.com",
        }),
        ...lookup(sim, "lookup_2", "get_order_details", {
          order_id: "#W3289292",
        }),
        ...lookup(sim, "lookup_3", "get_order_details", {
          order_id: "#W9722559",
        }),
      );
    },
  });
  const expected = script.turns.filter((_, i) => i !== 1).map((t, i) =>
    i === 2
      ? {
        ...t,
        tool_calls: t.tool_calls.filter((c) =>
          !["#W3289292", "#W9722559"].includes(c.arguments.order_id as string)
        ),
      }
      : t
  );
  assertEquals(answers.map(asTurn), expected);
  assertEquals(answers[2].tool_calls.map((c) => c.arguments!.order_id), [
    "#W9154975",
    "#W7284266",
  ]);
  assertEquals(walker.stats, {
    answers: script.turns.length - 1,
    skipped_calls: 3,
    skipped_turns: 1,
    repeated_writes: 0,
  });
});

Deno.test("ScriptWalker does not count a read made before a successful write", () => {
  const sim = SIMS[1];
  const script = scriptFromTau2(sim);
  const orders = (turn: { tool_calls: ChatToolCall[] }) =>
    turn.tool_calls.map((c) => c.arguments!.order_id);
  const write = (content: string): ChatMessage[] => [
    {
      role: "assistant",
      content: null,
      tool_calls: [{
        id: "w_1",
        name: "cancel_pending_order",
        arguments: { order_id: "#W3289292", reason: "no longer needed" },
        raw_arguments: "{}",
      }],
    },
    {
      role: "tool",
      tool_call_id: "w_1",
      name: "cancel_pending_order",
      content,
    },
  ];
  const read = lookup(sim, "lookup_9", "get_order_details", {
    order_id: "#W9722559",
  });
  const at3 = (extra: ChatMessage[]) => {
    const walker = new ScriptWalker(script, { writes: WRITES });
    for (let i = 0; i < 3; i++) walker.next([{ role: "user", content: "hi" }]);
    assertEquals(walker.position, 3);
    const step = walker.next([{ role: "user", content: "hi" }, ...extra]);
    assertOk(!("exhausted" in step));
    return orders(step);
  };
  const all = ["#W9154975", "#W3289292", "#W7284266", "#W9722559"];
  assertEquals(
    at3([
      ...read,
      ...write('{"order_id": "#W3289292", "status": "cancelled"}'),
    ]),
    all,
  );
  assertEquals(
    at3([...read, ...write("Refused: not a pending order")]),
    all.filter((o) => o !== "#W9722559"),
  );
  assertEquals(
    at3([
      ...write('{"order_id": "#W3289292", "status": "cancelled"}'),
      ...read,
    ]),
    all.filter((o) => o !== "#W9722559"),
  );
});

Deno.test("ScriptWalker repeats a refused write as recorded and only then moves on", () => {
  const sim = SIMS[1];
  const script = scriptFromTau2(sim);
  const walker = new ScriptWalker(script, { writes: WRITES });
  let refusals = 0;
  const answers = replay(sim, walker, {
    result(call, recorded) {
      if (
        call.name === "cancel_pending_order" &&
        call.arguments!.order_id === "#W3289292" && refusals < 2
      ) {
        refusals++;
        return "Refused: the reason must be one of the schema's; nothing was called";
      }
      return recorded;
    },
  });
  const cancels = answers.filter((a) =>
    a.tool_calls[0]?.name === "cancel_pending_order"
  );
  assertEquals(cancels.map((a) => a.tool_calls[0].arguments!.order_id), [
    "#W3289292",
    "#W3289292",
    "#W3289292",
    "#W9722559",
  ]);
  assertEquals(new Set(cancels.map((a) => a.tool_calls[0].id)).size, 4);
  assertEquals(answers.length, script.turns.length + 2);
  assertEquals(answers.at(-1)!.content, script.turns.at(-1)!.content);
  assertEquals(walker.stats.repeated_writes, 2);
});

Deno.test("TokenCounter counts o200k_base tokens with the documented framing", async () => {
  const { encode, vocabularySize } = await import("gpt-tokenizer");
  assertEquals(TOKEN_ENCODING, "o200k_base");
  assertEquals(vocabularySize, 200_006);
  assertEquals(encode("hello world"), [24912, 2375]); // o200k_base ids (cl100k_base: 15339, 1917)
  const req = { messages: [{ role: "user", content: "hello world" }] };
  // 3 framing + "user" (1) + "hello world" (2) + 3 reply priming.
  assertEquals(countTokens(req, { content: "hello world" }), {
    prompt_tokens: 9,
    completion_tokens: 2,
  });
  const tools = [{
    type: "function",
    function: { name: "get_user_details", parameters: { type: "object" } },
  }];
  const c = new TokenCounter();
  assertEquals(c.prompt({ ...req, tools }), 9 + c.text(JSON.stringify(tools)));
  assertEquals(
    c.completion({
      content: null,
      tool_calls: [{ name: "get_user_details", arguments: '{"user_id":"a"}' }],
    }),
    c.text("get_user_details") + c.text('{"user_id":"a"}'),
  );
  const longer = {
    messages: [...req.messages, {
      role: "assistant",
      content: "Hi! How can I help you today?",
    }],
  };
  assertOk(c.prompt(longer) > c.prompt(req));
  assertEquals(
    c.prompt(longer),
    new TokenCounter({ maxMemo: 0 }).prompt(longer),
  );
  assertEquals(c.text("a <|endoftext|> b"), 9, "special tokens count as text");
});

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
