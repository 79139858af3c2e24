/**
 * The scripted model: scripts from real τ² retail simulations (the vendored
 * slice), the walker replaying them, and the token counts.
 *
 * @module
 */
import { assertEquals, assertMatch, assertOk } from "../_assert.ts";
import type { ChatMessage, ChatToolCall } from "../../lib/models/chat_types.ts";
import {
  scriptFromTau2,
  type ScriptTurn,
  ScriptWalker,
  type Tau2Simulation,
} from "../../eval/scripted_model.ts";
import {
  countTokens,
  TOKEN_ENCODING,
  TokenCounter,
} from "../../eval/token_count.ts";
import { key, lookup, recordedResults, SIMS, WRITES } from "./_scripted.ts";

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
