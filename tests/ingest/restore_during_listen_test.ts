/**
 * Issue 44, item 8: after a restart the listener answers at once, while the
 * hooks' and the gateway's state is still being restored from the spools;
 * a hook or a model call that comes meanwhile is held and recorded once the
 * restore has caught up (linked as if there had been no restart). The
 * restore is held on a promise the test releases (`restoreAfter`), so what
 * happens during a restore is seen without a store large enough to make it
 * slow.
 *
 * @module
 */
import OpenAI from "openai";
import { assertEquals, assertOk } from "../_assert.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { IngestServer } from "../../lib/ingest/server.ts";
import type { TraceEvent } from "../../lib/trace/event.ts";
import { tempDir } from "../_helpers.ts";
import { waitFor } from "../_wait.ts";
import { startUpstreams } from "../model_gateway/_upstreams.ts";

const CAP = "cap_restart";

function bashHook(event: "PreToolUse" | "PostToolUse", call = 1) {
  return {
    session_id: "sess-restart",
    transcript_path: "/tmp/none.jsonl",
    cwd: "/tmp",
    hook_event_name: event,
    tool_name: "Bash",
    tool_input: { command: `ls -la ${call}`, description: "list" },
    tool_use_id: `toolu_restart_${call}`,
    ...(event === "PostToolUse"
      ? { tool_response: { stdout: "total 0", stderr: "", interrupted: false } }
      : {}),
  };
}

function postHook(url: string, body: unknown): Promise<Response> {
  return fetch(`${url}/hook/host_a?cap=${CAP}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

async function health(url: string): Promise<{
  status: number;
  stats: Record<string, unknown>;
}> {
  const res = await fetch(`${url}/health`);
  const body = await res.json();
  return { status: res.status, stats: body.stats };
}

/** Ask `/health` until `held_for_restore` reaches `n`. */
async function heldReaches(url: string, n: number): Promise<void> {
  await waitFor(
    `held_for_restore to reach ${n}`,
    async () => (await health(url)).stats.held_for_restore === n,
    { everyMs: 5 },
  );
}

async function spool(store: HarnessStore): Promise<TraceEvent[]> {
  const out: TraceEvent[] = [];
  for await (const ev of store.readEvents(CAP)) out.push(ev);
  return out;
}

Deno.test("during a restore the listener answers /health at once, and hooks that come meanwhile are held, then recorded in their order, linked to the calls they complete, once the restore caught up", async () => {
  await using dir = await tempDir();
  {
    using store = new HarnessStore(dir.path, { role: "ingest-server" });
    const server = new IngestServer(store, { port: 0, modelGateway: false });
    const url = await server.start();
    const res = await postHook(url, bashHook("PreToolUse"));
    assertEquals(res.status, 204);
    await server.close();
  }
  using store = new HarnessStore(dir.path, { role: "ingest-server" });
  let release!: () => void;
  const hold = new Promise<void>((r) => release = r);
  const server = new IngestServer(store, {
    port: 0,
    modelGateway: false,
    restoreAfter: hold,
  });
  const url = await server.start();
  let heldBy = 0;
  try {
    const during = await health(url);
    assertEquals(during.status, 200);
    assertEquals(during.stats.restoring, true);
    assertEquals(during.stats.restored_pending_calls, undefined);
    // The completion comes while the restore has not read the spool.
    const answered = postHook(url, bashHook("PostToolUse"));
    await heldReaches(url, 1);
    // Then a second call, start and completion: held behind the first.
    const second = postHook(url, bashHook("PreToolUse", 2));
    await heldReaches(url, 2);
    const secondDone = postHook(url, bashHook("PostToolUse", 2));
    await heldReaches(url, 3);
    assertEquals(
      (await spool(store)).filter((e) => e.kind === "tool.call.completed")
        .length,
      0,
      "nothing recorded while the restore is held",
    );
    // Every hook is held by now; the clock moves on before the release (a
    // wait for the clock itself, not for the server).
    heldBy = Date.now();
    await waitFor("the clock to move on", () => Date.now() > heldBy + 5, {
      everyMs: 1,
    });
    // Other routes are not held: a capture list answers meanwhile.
    const list = await fetch(`${url}/captures`);
    assertEquals(list.status, 200);
    await list.body?.cancel();
    release();
    const res = await answered;
    assertEquals(res.status, 204);
    assertEquals((await second).status, 204);
    assertEquals((await secondDone).status, 204);
    await server.restored;
    const after = await health(url);
    assertEquals(after.stats.restoring, false);
    assertEquals(after.stats.held_for_restore, 0);
    assertEquals(after.stats.restored_pending_calls, 1);
    assertOk(typeof after.stats.restore_ms === "number");
  } finally {
    await server.close();
  }
  // Recorded in the order they came, each completion linked to its start.
  const calls = (await spool(store)).filter((e) =>
    e.kind.startsWith("tool.call.")
  );
  assertEquals(
    calls.map((e) => [e.kind, e.payload.host_call_id]),
    [
      ["tool.call.started", "toolu_restart_1"],
      ["tool.call.completed", "toolu_restart_1"],
      ["tool.call.started", "toolu_restart_2"],
      ["tool.call.completed", "toolu_restart_2"],
    ],
  );
  assertEquals(calls[1].parent_event_id, calls[0].event_id);
  assertEquals(calls[3].parent_event_id, calls[2].event_id);
  // A held hook keeps the time it came, not the time the restore ended.
  assertOk(Date.parse(calls[1].timestamp) <= heldBy, calls[1].timestamp);
});

Deno.test("during a restore a model call is held, not refused: forwarded once the gateway's conversations are restored, and recorded in the episode it continues", async () => {
  await using dir = await tempDir();
  await using up = startUpstreams();
  const gatewayOptions = {
    upstreamOpenai: up.openaiBase,
    upstreamAnthropic: up.anthropicBase,
  };
  const client = (url: string) =>
    new OpenAI({
      baseURL: `${url}/v1`,
      apiKey: "restart-test-key-0000",
      maxRetries: 0,
      timeout: 60_000,
      defaultHeaders: { "x-harness-capture": CAP },
    });
  const first = [
    { role: "system" as const, content: "You are a shop assistant." },
    { role: "user" as const, content: "Where is order 7?" },
  ];
  {
    using store = new HarnessStore(dir.path, { role: "ingest-server" });
    const server = new IngestServer(store, {
      port: 0,
      modelGateway: gatewayOptions,
    });
    const url = await server.start();
    up.push({ text: "Let me look it up." });
    await client(url).chat.completions.create({
      model: "m",
      messages: first,
    });
    await server.modelGateway?.settled();
    await server.close();
  }
  using store = new HarnessStore(dir.path, { role: "ingest-server" });
  let release!: () => void;
  const hold = new Promise<void>((r) => release = r);
  const server = new IngestServer(store, {
    port: 0,
    modelGateway: gatewayOptions,
    restoreAfter: hold,
  });
  const url = await server.start();
  try {
    assertEquals((await health(url)).stats.restoring, true);
    up.push({ text: "It shipped yesterday." });
    const call = client(url).chat.completions.create({
      model: "m",
      messages: [
        ...first,
        { role: "assistant", content: "Let me look it up." },
        { role: "user", content: "Thanks, and order 8?" },
      ],
    });
    await heldReaches(url, 1);
    assertEquals(up.requests.length, 1, "not forwarded during the restore");
    release();
    const answer = await call;
    assertEquals(answer.choices[0].message.content, "It shipped yesterday.");
    await server.modelGateway?.settled();
  } finally {
    await server.close();
  }
  const evs = await spool(store);
  const requests = evs.filter((e) => e.kind === "model.requested");
  assertEquals(requests.length, 2);
  assertEquals(
    requests[1].episode_id,
    requests[0].episode_id,
    "the held call continues the restored conversation",
  );
  assertEquals(
    evs.filter((e) => e.kind === "episode.started").length,
    1,
    "no second episode for the continued conversation",
  );
});

Deno.test("closing the server during a restore stops the restore and answers what it held (nothing hangs)", async () => {
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path, { role: "ingest-server" });
  const never = new Promise<void>(() => {});
  const server = new IngestServer(store, {
    port: 0,
    modelGateway: false,
    restoreAfter: never,
  });
  const url = await server.start();
  const held = postHook(url, bashHook("PreToolUse", 3));
  await heldReaches(url, 1);
  await server.close();
  assertEquals((await held).status, 204);
  assertEquals(server.stats?.restoring, false);
  const started = (await spool(store)).filter((e) =>
    e.kind === "tool.call.started"
  );
  assertEquals(started.length, 1, "the held hook is recorded at close");
});

Deno.test("a hook whose client gives up while it is held (the hook client's time-out) is still recorded once the restore caught up", async () => {
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path, { role: "ingest-server" });
  let release!: () => void;
  const hold = new Promise<void>((r) => release = r);
  const server = new IngestServer(store, {
    port: 0,
    modelGateway: false,
    restoreAfter: hold,
  });
  const url = await server.start();
  try {
    const gaveUp = new AbortController();
    const sent = fetch(`${url}/hook/host_a?cap=${CAP}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(bashHook("PreToolUse", 4)),
      signal: gaveUp.signal,
    }).catch((err) => err);
    await heldReaches(url, 1);
    gaveUp.abort();
    assertOk((await sent) instanceof Error, "the client gave up");
    release();
    await server.restored;
    await heldReaches(url, 0);
  } finally {
    await server.close();
  }
  const started = (await spool(store)).filter((e) =>
    e.kind === "tool.call.started"
  );
  assertEquals(started.map((e) => e.payload.host_call_id), [
    "toolu_restart_4",
  ]);
});
