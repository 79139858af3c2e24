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
