/**
 * After a restart, the gateway's memory of conversations comes back from
 * the spool: a conversation that goes on records only what is new, and a
 * tool result finds the call the model made before the restart.
 */
import { assertEquals } from "../_assert.ts";
import { tempDir } from "../_helpers.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { IngestServer } from "../../lib/ingest/server.ts";
import type { TraceEvent } from "../../lib/trace/event.ts";

function upstream() {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (req) => {
      const body = await req.json();
      const last = body.messages.at(-1);
      const call = last.role === "user";
      return Response.json({
        id: "c",
        object: "chat.completion",
        created: 1,
        model: "m",
        choices: [{
          index: 0,
          message: {
            role: "assistant",
            content: call ? null : "done",
            ...(call
              ? {
                tool_calls: [{
                  id: `call_${body.messages.length}`,
                  type: "function",
                  function: { name: "lookup", arguments: '{"q":"a"}' },
                }],
              }
              : {}),
          },
          finish_reason: call ? "tool_calls" : "stop",
        }],
        usage: { prompt_tokens: 2, completion_tokens: 1, total_tokens: 3 },
      });
    },
  );
  return { url: `http://127.0.0.1:${server.addr.port}/v1`, server };
}

async function serve(root: string, upstreamUrl: string) {
  const store = new HarnessStore(root, { role: "ingest-server" });
  const server = new IngestServer(store, {
    port: 0,
    modelGateway: { upstreamOpenai: upstreamUrl },
  });
  const url = await server.start();
  return {
    store,
    url,
    async ask(messages: unknown[]) {
      const res = await fetch(`${url}/v1/chat/completions`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          authorization: "Bearer sk-x",
          "x-harness-capture": "r",
        },
        body: JSON.stringify({ model: "m", messages }),
      });
      return (await res.json()).choices[0].message;
    },
    async close() {
      await server.close();
      store.close();
    },
  };
}

Deno.test("after a restart a conversation goes on where it was: nothing recorded twice, the result linked to the call made before", async () => {
  await using dir = await tempDir();
  const up = upstream();
  const messages: unknown[] = [
    { role: "system", content: "be brief" },
    { role: "user", content: "find a" },
  ];
  const first = await serve(dir.path, up.url);
  const answer = await first.ask(messages);
  await first.close();
  messages.push(answer, {
    role: "tool",
    tool_call_id: answer.tool_calls[0].id,
    content: '{"found":true}',
  });
  const second = await serve(dir.path, up.url);
  assertEquals((await second.ask(messages)).content, "done");
  await second.close();
  const store = new HarnessStore(dir.path, { readOnly: true });
  const evs: TraceEvent[] = [];
  for await (const e of store.readEvents("r")) evs.push(e);
  store.close();
  const kinds = evs.map((e) => e.kind);
  assertEquals(kinds, [
    "episode.started",
    "message",
    "model.requested",
    "model.responded",
    "tool.call.started",
    "tool.call.completed",
    "model.requested",
    "model.responded",
    "message",
  ]);
  assertEquals(new Set(evs.map((e) => e.episode_id)).size, 1);
  const started = evs.find((e) => e.kind === "tool.call.started")!;
  const done = evs.find((e) => e.kind === "tool.call.completed")!;
  assertEquals(done.parent_event_id, started.event_id);
  assertEquals(evs[6].payload.conversation, {
    ...(evs[6].payload.conversation as Record<string, unknown>),
    continues: 2,
    previous: evs[2].event_id,
  });
  await up.server.shutdown();
});

Deno.test("restoreBook() rebuilds each conversation's end from a long spool in order: the last request, its answer, a branch beside it", async () => {
  const { ConversationBook } = await import(
    "../../lib/model_gateway/conversation_book.ts"
  );
  const { answerKey } = await import(
    "../../lib/model_gateway/conversation_entry.ts"
  );
  const { identify } = await import(
    "../../lib/model_gateway/episode_identity.ts"
  );
  const { exchangeEvents } = await import(
    "../../lib/model_gateway/recorder.ts"
  );
  const { restoreBook } = await import("../../lib/model_gateway/restore.ts");
  const { openaiChatWire } = await import(
    "../../lib/model_gateway/wires/openai_chat/read.ts"
  );
  await using dir = await tempDir();
  const store = new HarnessStore(dir.path, { role: "ingest-server" });
  const book = new ConversationBook();
  const record = (messages: unknown[], callId: string, client?: string) => {
    const body = { model: "m", messages: structuredClone(messages) };
    const request = openaiChatWire.request(body);
    const identity = identify(book, {
      capture: "long",
      request,
      client: {
        first: client ? { id: client, source: "x-harness-episode" } : null,
        later: null,
      },
    });
    book.settle(identity.conversation, identity, {
      state: "answered",
      answer: answerKey("", [callId]),
    });
    const events = exchangeEvents({
      capture_id: "long",
      identity,
      request,
      body,
      response: {
        id: `r_${callId}`,
        model: "m",
        text: "",
        tool_calls: [{ id: callId, name: "lookup", arguments: {} }],
        stop_reason: "tool_calls",
        usage: null,
      },
      status: 200,
      started: new Date(),
      duration_ms: 1,
    }, { book });
    store.sink("long").emitMany(events);
    return identity.episode_id;
  };
  // One conversation of 200 turns (its spool grows with each turn's new
  // messages only), and in a named episode a branch off turn 100.
  const messages: unknown[] = [{ role: "user", content: "start" }];
  const named: unknown[] = [{ role: "user", content: "named start" }];
  let episode = "";
  let branchAt: unknown[] = [];
  for (let turn = 0; turn < 200; turn++) {
    episode = record(messages, `call_${turn}`);
    record(named, `named_${turn}`, "ep_named");
    const step = (m: unknown[], id: string) =>
      m.push(
        {
          role: "assistant",
          content: null,
          tool_calls: [{
            id,
            type: "function",
            function: { name: "lookup", arguments: "{}" },
          }],
        },
        { role: "tool", tool_call_id: id, content: `result ${turn}` },
      );
    step(messages, `call_${turn}`);
    step(named, `named_${turn}`);
    if (turn === 100) branchAt = structuredClone(named);
  }
  branchAt.push({ role: "user", content: "an edited turn" });
  record(branchAt, "named_branch", "ep_named");
  store.flush();
  const restored = new ConversationBook();
  const n = await restoreBook(store, restored);
  store.close();
  assertEquals(n, 3);
  const [main] = restored.ofEpisode("long", episode);
  assertEquals(main.hashes, book.ofEpisode("long", episode)[0].hashes);
  assertEquals(main.hashes.length, 1 + 2 * 199);
  assertEquals(main.end.state, "answered");
  assertEquals(main.end.answer, answerKey("", ["call_199"]));
  const live = book.ofEpisode("long", "ep_named").map((c) => c.hashes);
  assertEquals(
    restored.ofEpisode("long", "ep_named").map((c) => c.hashes),
    live,
  );
  assertEquals(live.length, 2);
  assertEquals(live[1].length, branchAt.length);
});
