/**
 * No exchange is dropped (issue 45, item 1): what the recorder cannot take
 * now waits in the store's spill, on disk, and is recorded in order; a
 * spill a process left behind when it was killed (`kill -9`) is recorded
 * at the next start, each exchange once. The client's key, of a shape no
 * redaction rule knows, is in none of the spill's bytes nor the store's
 * (issue 44, item 9).
 */
import type { TraceEvent } from "../../lib/trace/mod.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { IngestServer } from "../../lib/ingest/server.ts";
import { assertEquals, assertOk } from "../_assert.ts";
import { startServer } from "../_server.ts";
import { tempDir } from "../_helpers.ts";
import { upstream } from "./_faults.ts";
import { spawnGateway } from "./_spawned.ts";
import { waitFor } from "../_wait.ts";

/** A key of no known shape: only the gateway's exact scrub can hide it. */
const ODD_KEY = "hostedtok-QUOKKA-7h3-unknown-shape-99";

/**
 * An upstream that answers each chat request; asked to echo (the last
 * message says "echo"), its text repeats the key it got.
 */
function echoUpstream() {
  let n = 0;
  return upstream(async (req) => {
    const body = await req.json();
    const key = req.headers.get("authorization") ?? "";
    const echo = String(body.messages.at(-1)?.content ?? "").includes("echo");
    const text = `answer ${++n}${echo ? ` (you sent ${key})` : ""}`;
    if (!body.stream) {
      return Response.json({
        id: `c${n}`,
        object: "chat.completion",
        created: 1,
        model: "m",
        choices: [{
          index: 0,
          message: { role: "assistant", content: text },
          finish_reason: "stop",
        }],
        usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
      });
    }
    const chunk = (delta: Record<string, unknown>, finish: string | null) =>
      `data: ${
        JSON.stringify({
          id: `c${n}`,
          object: "chat.completion.chunk",
          created: 1,
          model: "m",
          choices: [{ index: 0, delta, finish_reason: finish }],
        })
      }\n\n`;
    return new Response(
      chunk({ role: "assistant", content: text }, null) +
        chunk({}, "stop") + "data: [DONE]\n\n",
      { headers: { "content-type": "text/event-stream" } },
    );
  });
}

/** One chat request through the gateway; the answer's text. */
async function ask(
  url: string,
  messages: { role: string; content: string }[],
  { stream = false, capture = "cap_spill" } = {},
): Promise<string> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${ODD_KEY}`,
      "x-harness-capture": capture,
    },
    body: JSON.stringify({ model: "m", messages, stream }),
  });
  const text = await res.text();
  assertEquals(res.status, 200, text);
  if (!stream) return JSON.parse(text).choices[0].message.content;
  return text.split("\n").filter((l) => l.startsWith("data: {"))
    .map((l) => JSON.parse(l.slice(6)).choices[0].delta.content ?? "")
    .join("");
}

/** Files under a directory holding a string. */
function filesHolding(dir: string, needle: string): string[] {
  const out: string[] = [];
  for (const e of Deno.readDirSync(dir)) {
    const p = `${dir}/${e.name}`;
    if (e.isDirectory) out.push(...filesHolding(p, needle));
    else if (new TextDecoder().decode(Deno.readFileSync(p)).includes(needle)) {
      out.push(p);
    }
  }
  return out;
}

async function eventsOf(store: HarnessStore, cap: string) {
  const out: TraceEvent[] = [];
  for await (const ev of store.readEvents(cap)) out.push(ev);
  return out;
}

Deno.test("exchanges the recorder cannot take now are spilled to disk and all recorded, in order", async () => {
  const up = echoUpstream();
  // Two exchanges wait in memory at most: the rest go to the spill.
  await using s = await startServer({
    modelGateway: { upstreamOpenai: `${up.url}/v1`, maxRecordQueue: 2 },
  });
  const n = 40;
  await Promise.all(
    Array.from(
      { length: n },
      (_, i) =>
        ask(s.url, [{ role: "user", content: `question ${i}, echo` }], {
          stream: i % 2 === 0,
        }),
    ),
  );
  const g = s.server.modelGateway!;
  await g.settled();
  assertEquals(
    [g.stats.recorded, g.stats.record_misses, g.stats.queued],
    [n, 0, 0],
  );
  assertOk((g.stats.spilled ?? 0) > 0, "some exchanges were spilled");
  // What each request brought is let go once it is recorded, spilled or not.
  assertEquals(g.stats.requests_held, 0);
  const events = await eventsOf(s.store, "cap_spill");
  const asked = events.filter((e) => e.kind === "model.requested");
  assertEquals(asked.length, n);
  // Each exchange whole: its answer names its request, right after it.
  const answered = events.filter((e) => e.kind === "model.responded");
  assertEquals(
    answered.map((e) => e.parent_event_id),
    asked.map((e) => e.event_id),
  );
  // The spill is emptied once recorded; the key is nowhere.
  assertEquals(
    Deno.readFileSync(`${s.root}/model_gateway/spill.jsonl`).length,
    0,
  );
  s.store.flush();
  assertEquals(filesHolding(s.root, ODD_KEY), []);
  await up.close();
});

Deno.test("what a killed gateway left in its spill is recorded at the next start, once, the conversation going on", async () => {
  const up = echoUpstream();
  await using dir = await tempDir();
  const root = dir.path;
  // Every exchange goes to the spill and waits there (recording held back).
  const child = await spawnGateway(root, {
    upstreamOpenai: `${up.url}/v1`,
    maxRecordQueue: 0,
    recordDelayMs: 600_000,
  });
  const messages: { role: string; content: string }[] = [];
  for (let i = 0; i < 5; i++) {
    messages.push({
      role: "user",
      content: `turn ${i}${i === 2 ? ` my key is ${ODD_KEY}, echo` : ""}`,
    });
    const text = await ask(child.url, messages, { stream: i % 2 === 1 });
    messages.push({ role: "assistant", content: text });
  }
  // Each is written to the spill once its answer is on its way.
  await waitFor(
    "5 exchanges spilled",
    async () =>
      ((await (await fetch(`${child.url}/health`)).json()).model_gateway
        .spilled ?? 0) >= 5,
  );
  const spill = `${root}/model_gateway/spill.jsonl`;
  const tapes = Deno.readTextFileSync(spill).trim().split("\n");
  assertEquals(tapes.length, 5);
  // The key reached the upstream (it echoed it) but is in no byte on disk.
  assertOk(messages[5].content.includes(ODD_KEY));
  assertEquals(filesHolding(root, ODD_KEY), []);
  await child.kill();
  // A line cut by the stop (a write torn mid-way) is left out, not read.
  Deno.writeTextFileSync(spill, '{"v":1,"request_event_id":"evt_torn', {
    append: true,
  });

  // The next start records the five, in order, in one episode.
  {
    const store = new HarnessStore(root, { role: "ingest-server" });
    const server = new IngestServer(store, {
      port: 0,
      modelGateway: { upstreamOpenai: `${up.url}/v1` },
    });
    const url = await server.start();
    // Model calls wait for the restore, which records the spill first.
    await server.restored;
    const g = server.modelGateway!;
    assertEquals(g.stats.recorded_from_spill, 5);
    assertEquals(g.stats.record_misses, 0);
    // Recorded, the spill starts again empty.
    assertEquals(Deno.readFileSync(spill).length, 0);
    let events = await eventsOf(store, "cap_spill");
    const asked = events.filter((e) => e.kind === "model.requested");
    assertEquals(asked.length, 5);
    assertEquals(
      asked.map((e) => e.event_id),
      tapes.map((t) => JSON.parse(t).request_event_id),
    );
    assertEquals(new Set(events.map((e) => e.episode_id)).size, 1);
    assertEquals(
      events.filter((e) => e.kind === "message" && e.payload.role === "user")
        .map((e) => String(e.payload.text).slice(0, 6)),
      ["turn 0", "turn 1", "turn 2", "turn 3", "turn 4"],
    );
    // The conversation goes on where the spill left it.
    messages.push({ role: "user", content: "turn 5" });
    await ask(url, messages);
    await g.settled();
    events = await eventsOf(store, "cap_spill");
    assertEquals(new Set(events.map((e) => e.episode_id)).size, 1);
    const last = events.filter((e) => e.kind === "model.requested").at(-1)!;
    assertEquals(
      (last.payload.conversation as { previous: string }).previous,
      asked.at(-1)!.event_id,
    );
    await server.close();
    store.close();
  }
  // A second start records nothing again.
  {
    const store = new HarnessStore(root, { role: "ingest-server" });
    const server = new IngestServer(store, { port: 0, modelGateway: {} });
    await server.start();
    await server.restored;
    assertEquals(server.modelGateway!.stats.recorded_from_spill ?? 0, 0);
    const events = await eventsOf(store, "cap_spill");
    assertEquals(events.filter((e) => e.kind === "model.requested").length, 6);
    await server.close();
    store.flush();
    assertEquals(filesHolding(root, ODD_KEY), []);
    assertOk(filesHolding(root, "[REDACTED:client_key]").length > 0);
    store.close();
  }
  await up.close();
});
