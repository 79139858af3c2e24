import { assertEquals } from "../_assert.ts";
import { ConversationBook } from "../../lib/model_gateway/conversation_book.ts";
import { answerKey } from "../../lib/model_gateway/conversation_entry.ts";
import {
  type ClientEpisode,
  identify,
} from "../../lib/model_gateway/episode_identity.ts";
import {
  type Exchange,
  exchangeEvents,
} from "../../lib/model_gateway/recorder.ts";
import { extendPrefix } from "../../lib/model_gateway/message_hash.ts";
import { openaiChatWire } from "../../lib/model_gateway/wires/openai_chat/read.ts";
import type { NormResponse } from "../../lib/model_gateway/wire_types.ts";

/**
 * One exchange as the gateway handles it: the episode decided on arrival,
 * the answer settled, the events recorded.
 */
function exchange(
  book: ConversationBook,
  ex: Omit<Exchange, "identity"> & { client?: ClientEpisode },
) {
  const identity = identify(book, {
    capture: ex.capture_id,
    request: ex.request,
    client: { first: ex.client ?? null, later: null },
  });
  const res = ex.response;
  book.settle(identity.conversation, identity, {
    state: res ? "answered" : "failed",
    answer: res ? answerKey(res.text, res.tool_calls.map((c) => c.id)) : null,
  });
  return exchangeEvents({ ...ex, identity }, { book });
}

const SYSTEM = {
  role: "system",
  content: "You are a retail agent. Use the tools.",
};

/** Run `agents` conversations at once, their turns interleaved. */
function interleaved(book: ConversationBook, agents: number, turns: number) {
  const histories = Array.from({ length: agents }, (_, n) =>
    [
      SYSTEM,
      { role: "user", content: `Agent ${n}: which of my orders are pending?` },
    ] as Record<string, unknown>[]);
  const kinds: string[] = [];
  for (let turn = 1; turn <= turns; turn++) {
    for (let n = 0; n < agents; n++) {
      const body = { model: "m", messages: structuredClone(histories[n]) };
      const id = `call_${n}_${turn}`;
      const response: NormResponse = {
        id: `resp_${n}_${turn}`,
        model: "m",
        stop_reason: "tool_calls",
        text: "",
        tool_calls: [{ id, name: "get_order", arguments: { n } }],
        usage: null,
      };
      const events = exchange(book, {
        capture_id: "cap_book",
        request: openaiChatWire.request(body),
        body,
        response,
        status: 200,
        started: new Date(),
        duration_ms: 1,
      });
      kinds.push(...events.map((e) => e.kind));
      histories[n].push(
        {
          role: "assistant",
          content: null,
          tool_calls: [{
            id,
            type: "function",
            function: { name: "get_order", arguments: JSON.stringify({ n }) },
          }],
        },
        { role: "tool", tool_call_id: id, content: `order ${n}: pending` },
      );
    }
  }
  const count = (k: string) => kinds.filter((x) => x === k).length;
  return {
    episodes: count("episode.started"),
    messages: count("message"),
    completed: count("tool.call.completed"),
  };
}

Deno.test("ConversationBook tells 40 agents that share a system prompt apart when their turns interleave", () => {
  const got = interleaved(new ConversationBook(), 40, 3);
  // One episode and one user message per agent; each call's result found
  // in the agent's next request (turns 2 and 3).
  assertEquals(got, { episodes: 40, messages: 40, completed: 80 });
});

Deno.test("ConversationBook past maxPerFirstMessage: interleaved conversations are no longer told apart", () => {
  const got = interleaved(
    new ConversationBook({ maxPerFirstMessage: 4 }),
    5,
    2,
  );
  // Agent 0 was forgotten when agent 4 began; its second request starts a
  // new episode, which pushes agent 1 out, and so on: every second request
  // is a new episode with its history (user message, the call and its
  // result) recorded again. This is what 17 agents did at the old bound
  // of 16.
  assertEquals(got, { episodes: 10, messages: 10, completed: 5 });
});

const QUESTION = "Which of my orders are pending?";

Deno.test("exchangeEvents() records the conversation's head as the prefix hash of all its messages, turn after turn and after a restart", () => {
  const turns = (book: ConversationBook, from: number, to: number) => {
    const heads: [unknown, string][] = [];
    const history: Record<string, unknown>[] = [
      SYSTEM,
      { role: "user", content: QUESTION },
    ];
    for (let turn = 1; turn <= to; turn++) {
      const id = `call_${turn}`;
      if (turn >= from) {
        const body = { model: "m", messages: structuredClone(history) };
        const request = openaiChatWire.request(body);
        const events = exchange(book, {
          capture_id: "cap_head",
          client: { id: "ep_head", source: "x-harness-episode" },
          request,
          body,
          response: {
            id: `resp_${turn}`,
            model: "m",
            stop_reason: "tool_calls",
            text: "",
            tool_calls: [{ id, name: "get_order", arguments: {} }],
            usage: null,
          },
          status: 200,
          started: new Date(),
          duration_ms: 1,
        });
        const requested = events.find((e) => e.kind === "model.requested")!;
        heads.push([
          (requested.payload.conversation as { head: unknown }).head,
          request.messages.map((m) => m.hash).reduce(extendPrefix, ""),
        ]);
      }
      history.push(
        {
          role: "assistant",
          content: null,
          tool_calls: [{
            id,
            type: "function",
            function: { name: "get_order", arguments: "{}" },
          }],
        },
        { role: "tool", tool_call_id: id, content: `order ${turn}: pending` },
      );
    }
    return heads;
  };
  for (const [recorded, whole] of turns(new ConversationBook(), 1, 4)) {
    assertEquals(recorded, whole);
  }
  // A book restored from spools may not know a conversation's head.
  const book = new ConversationBook();
  turns(book, 1, 2);
  const c = book.ofEpisode("cap_head", "ep_head")[0];
  assertEquals(c.hashes.length, 4);
  const restored = new ConversationBook();
  restored.add({
    ...c,
    hashes: [...c.hashes],
    recorded: { ...c.recorded, head: null },
  });
  const later = turns(restored, 3, 5);
  assertEquals(later.length, 3);
  for (const [recorded, whole] of later) assertEquals(recorded, whole);
});
