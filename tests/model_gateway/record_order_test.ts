/**
 * The recording queue's rule: exchanges are recorded after their answers,
 * in slices between requests, yet every exchange answered before the server
 * stops is recorded by then, each whole (its events together) and in the
 * order answered, however many wait.
 *
 * @module
 */
import type { TraceEvent } from "../../lib/trace/mod.ts";
import { assertEquals } from "../_assert.ts";
import { type GatewayRig, KEY, ofKind, startGateway } from "./_gateway.ts";

/** A one-message conversation of its own, streamed or not. */
function ask(base: string, capture: string, n: number, stream: boolean) {
  return fetch(`${base}/v1/chat/completions`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${KEY}`,
      "x-harness-capture": capture,
    },
    body: JSON.stringify({
      model: "gpt-up",
      messages: [{ role: "user", content: `question ${n}` }],
      ...(stream
        ? { stream: true, stream_options: { include_usage: true } }
        : {}),
    }),
  });
}

/**
 * Send `n` one-message conversations back to back (exchange `i` streamed
 * when `streamed(i)`), each answered 200 and read whole.
 */
async function askInTurn(
  rig: GatewayRig,
  n: number,
  streamed: (i: number) => boolean,
): Promise<void> {
  for (let i = 0; i < n; i++) rig.up.push({ text: `answer ${i}` });
  for (let i = 0; i < n; i++) {
    const res = await ask(rig.server.url, rig.capture, i, streamed(i));
    assertEquals(res.status, 200);
    await res.arrayBuffer();
  }
}

/** The user's text of each exchange, in the order its events were sealed. */
function questions(events: TraceEvent[]): string[] {
  return ofKind(events, "message")
    .map((e) => e.payload as { role?: unknown; text?: unknown })
    .filter((p) => p.role === "user")
    .map((p) => String(p.text));
}

/** Episodes in sealing order, each once per run of its events. */
function runs(events: TraceEvent[]): string[] {
  const out: string[] = [];
  for (const e of events) {
    if (e.episode_id && out.at(-1) !== e.episode_id) out.push(e.episode_id);
  }
  return out;
}

Deno.test("RecordQueue: what was answered before close() is recorded by it, each exchange whole, in the order answered", async () => {
  await using rig = await startGateway({ capture: "cap_order" });
  const n = 60;
  // Back to back: answers come faster than the queue's first wait (10 ms).
  await askInTurn(rig, n, (i) => i % 2 === 1);
  // Each exchange is recorded or waiting, none lost in between.
  const stats = rig.server.server.modelGateway!.stats;
  assertEquals(stats.recorded + stats.queued + stats.record_misses, n);
  // Stopping the server records what waits before it returns.
  await rig.server.server.close();
  assertEquals([stats.recorded, stats.queued], [n, 0]);
  const events: TraceEvent[] = [];
  for await (const ev of rig.server.store.readEvents(rig.capture)) {
    events.push(ev);
  }
  assertEquals(ofKind(events, "model.requested").length, n);
  assertEquals(ofKind(events, "model.responded").length, n);
  assertEquals(
    questions(events),
    Array.from({ length: n }, (_, i) => `question ${i}`),
  );
  // One run of events per exchange: none was cut into another's.
  const episodes = runs(events);
  assertEquals(episodes.length, n);
  assertEquals(new Set(episodes).size, n);
  assertEquals(stats.record_misses, 0);
});

Deno.test("RecordQueue: a burst of concurrent exchanges is recorded whole, each in one run of events, none missed", async () => {
  await using rig = await startGateway({ capture: "cap_burst" });
  const n = 120;
  for (let i = 0; i < n; i++) rig.up.push({ text: `answer ${i}` });
  await Promise.all(Array.from({ length: n }, async (_, i) => {
    const res = await ask(rig.server.url, rig.capture, i, i % 3 === 0);
    assertEquals(res.status, 200);
    await res.arrayBuffer();
  }));
  const events = await rig.events();
  assertEquals(ofKind(events, "model.requested").length, n);
  assertEquals(
    questions(events).sort(),
    Array.from({ length: n }, (_, i) => `question ${i}`).sort(),
  );
  const episodes = runs(events);
  assertEquals(episodes.length, n);
  assertEquals(new Set(episodes).size, n);
  const stats = rig.server.server.modelGateway!.stats;
  assertEquals([stats.recorded, stats.record_misses, stats.queued], [n, 0, 0]);
  // The conversations are remembered; what their requests brought (their
  // bytes) is let go once recorded.
  assertEquals(stats.requests_held, 0);
});

Deno.test("RecordQueue: with recording off, what a request brought is let go once it is answered", async () => {
  await using rig = await startGateway({
    capture: "cap_off",
    gateway: { record: false },
  });
  const n = 12;
  await askInTurn(rig, n, (i) => i % 2 === 0);
  const g = rig.server.server.modelGateway!;
  await g.settled();
  assertEquals(
    [g.stats.recorded, g.stats.record_misses, g.stats.requests_held],
    [0, n, 0],
  );
});
