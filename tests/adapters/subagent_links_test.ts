import { assertEquals, assertOk } from "../_assert.ts";
import { HOSTS_DIR, tempDir } from "../_helpers.ts";
import { scenarioFiles, startServer } from "../_server.ts";
import { hostAToEvents } from "../../lib/adapters/claude_code.ts";
import { ToolCallCorrelator } from "../../lib/adapters/correlator.ts";
import { SessionMemory } from "../../lib/adapters/session_memory.ts";
import { hostCPluginSource } from "../../lib/installers/host_c_plugin.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { IngestServer } from "../../lib/ingest/server.ts";
import { captureToOtlp } from "../../lib/otel/export.ts";
import type { TraceEvent } from "../../lib/trace/event.ts";
import { captureEvents, forwardScenario } from "./_host_a_replay.ts";

const SUBAGENT = "a04f0f20bee881c0d";

function started(evs: TraceEvent[], tool: string): TraceEvent[] {
  return evs.filter((e) =>
    e.kind === "tool.call.started" &&
    (e.payload.tool as { host_name: string }).host_name === tool
  );
}

Deno.test("host_a: a subagent's calls, turns, start and stop are linked to the Agent call that started it (subagent)", async () => {
  await using srv = await startServer();
  await using dir = await tempDir();
  const evs = await forwardScenario(srv, {
    scenario: "subagent",
    captureId: "a_sub",
    dir: dir.path,
  });
  const [agent] = started(evs, "Agent");
  assertEquals(agent.parent_event_id, null);
  const [bash] = started(evs, "Bash");
  assertEquals(bash.payload.agent_id, SUBAGENT);
  assertEquals(bash.parent_event_id, agent.event_id);
  const marks = evs.filter((e) =>
    e.payload.type === "subagent.started" ||
    e.payload.type === "subagent.stopped"
  );
  assertEquals(marks.length, 2);
  for (const m of marks) assertEquals(m.parent_event_id, agent.event_id);
  // The subagent's own model calls (its transcript, read at SubagentStop).
  const turns = evs.filter((e) =>
    e.payload.agent_id === SUBAGENT && e.kind === "model.responded"
  );
  assertOk(turns.length > 0);
  // Everything the subagent did: under the Agent call, but a completion,
  // which points to its own start.
  for (const e of evs.filter((e) => e.payload.agent_id === SUBAGENT)) {
    const own = e.kind === "tool.call.completed"
      ? bash.event_id
      : agent.event_id;
    assertEquals(e.parent_event_id, own, `${e.sequence} ${e.kind}`);
  }
  // The Agent call's own end still links to its start.
  const end = evs.find((e) =>
    e.kind === "tool.call.completed" && e.parent_event_id === agent.event_id
  );
  assertOk(end);
});

Deno.test("hostAToEvents() links a subagent only when one pending Agent call can have started it", () => {
  const files = scenarioFiles(`${HOSTS_DIR}/host_a/subagent`);
  const body = (name: string) =>
    files.find((f) => f.name.includes(name))!.body as Record<string, unknown>;
  const agentCall = body("003-PreToolUse");
  const substart = body("004-SubagentStart");
  const subcall = body("005-PreToolUse");
  const run = (calls: Record<string, unknown>[]) => {
    const options = {
      captureId: "cap",
      correlator: new ToolCallCorrelator(),
      sessions: new SessionMemory(),
    };
    const evs = [...calls, substart, subcall].flatMap((p) =>
      hostAToEvents(p, options)
    );
    const byCall = new Map(
      evs.filter((e) => e.kind === "tool.call.started").map((
        e,
      ) => [e.payload.host_call_id, e]),
    );
    return { evs, byCall };
  };
  const input = agentCall.tool_input as Record<string, unknown>;
  const twin = { ...agentCall, tool_use_id: "toolu_twin" };
  // Two general-purpose helpers started at once: which one is this? No link.
  const same = run([agentCall, twin]);
  assertEquals(
    same.byCall.get(subcall.tool_use_id)!.parent_event_id,
    null,
  );
  // Of two kinds, the subagent's type names its call.
  const other = {
    ...twin,
    tool_input: { ...input, subagent_type: "Explore" },
  };
  const kinds = run([other, agentCall]);
  assertEquals(
    kinds.byCall.get(subcall.tool_use_id)!.parent_event_id,
    kinds.byCall.get(agentCall.tool_use_id)!.event_id,
  );
});

/** Play the recorded host_c files through the real plugin (a fixture's hooks as OpenCode calls them). */
async function playHostC(
  hooks: Record<string, (...a: unknown[]) => Promise<unknown>>,
  files: { name: string; body: unknown }[],
): Promise<void> {
  for (const f of files) {
    const r = f.body as { hook: string; input: unknown; output: unknown };
    const fn = hooks[r.hook];
    if (typeof fn !== "function") continue;
    if (r.hook === "dispose") await fn();
    else if (r.hook === "config" || r.hook === "event") await fn(r.input);
    else await fn(r.input, r.output);
  }
}

/** The plugin as the installer writes it, loaded from a file. */
async function loadPlugin(
  dir: string,
  url: string,
): Promise<Record<string, (...a: unknown[]) => Promise<unknown>>> {
  const file = `${dir}/plugin.js`;
  Deno.writeTextFileSync(file, hostCPluginSource({ url, capture: "c_sub" }));
  return await (await import(`file://${file}`)).HarnessPlugin({});
}

/**
 * Every event of the child session that has no parent of its own (all but
 * a call's completion) points to the parent's `task` call; a completion
 * points to its own start.
 */
function assertChildLinked(evs: TraceEvent[]): void {
  const [task] = started(evs, "task");
  const starts = evs.filter((e) => e.kind === "episode.started");
  assertEquals(starts.length, 2);
  const child = starts.find((e) => e.payload.parent_session_id)!;
  assertEquals(child.payload.parent_session_id, task.episode_id);
  const root = starts.find((e) => !e.payload.parent_session_id)!;
  assertEquals(root.parent_event_id, null);
  const mine = evs.filter((e) => e.episode_id === child.episode_id);
  // What the child recorded: its prompt, a bash call, answers, its end.
  assertEquals(
    mine.map((e) => e.kind),
    [
      "episode.started",
      "message",
      "tool.call.started",
      "tool.call.completed",
      "model.responded",
      "message",
      "model.responded",
      "episode.finished",
    ],
  );
  const [bash] = started(mine, "bash");
  for (const e of mine) {
    const own = e.kind === "tool.call.completed"
      ? bash.event_id
      : task.event_id;
    assertEquals(e.parent_event_id, own, `${e.sequence} ${e.kind}`);
  }
  // The parent session's own events are not touched.
  assertEquals(task.parent_event_id, null);
}

Deno.test("host_c: every event of a child session without a parent of its own points to the parent's task call (subagent)", async () => {
  await using srv = await startServer();
  await using dir = await tempDir();
  const hooks = await loadPlugin(dir.path, srv.url);
  await playHostC(hooks, scenarioFiles(`${HOSTS_DIR}/host_c/subagent`));
  assertEquals((await srv.store.verifyCapture("c_sub")).ok, true);
  assertChildLinked(await captureEvents(srv.store, "c_sub"));
});

Deno.test("host_c: a server restart after the child session started keeps its events linked to the task call (subagent)", async () => {
  await using dir = await tempDir();
  const files = scenarioFiles(`${HOSTS_DIR}/host_c/subagent`);
  // Stop the server right after the child's session.created reached it.
  const cut = files.findIndex((f) => {
    const b = f.body as {
      hook: string;
      input: {
        event?: {
          type?: string;
          properties?: { info?: { parentID?: string } };
        };
      };
    };
    return b.hook === "event" && b.input.event?.type === "session.created" &&
      !!b.input.event.properties?.info?.parentID;
  }) + 1;
  assertOk(cut > 0 && cut < files.length);
  let port = 0;
  let hooks: Record<string, (...a: unknown[]) => Promise<unknown>>;
  {
    using store = new HarnessStore(dir.path, { role: "ingest-server" });
    const server = new IngestServer(store, { port: 0 });
    const url = await server.start();
    port = Number(new URL(url).port);
    hooks = await loadPlugin(dir.path, url);
    await playHostC(hooks, files.slice(0, cut));
    await server.close();
  }
  // The same port: the plugin (OpenCode's process) goes on posting there.
  using store = new HarnessStore(dir.path, { role: "ingest-server" });
  const server = new IngestServer(store, { port });
  const url = await server.start();
  await server.restored; // the restore runs behind the listener
  try {
    const health = await (await fetch(`${url}/health`)).json();
    assertEquals(health.stats.restored_subagent_links, 1);
    await playHostC(hooks, files.slice(cut));
  } finally {
    await server.close();
  }
  assertEquals((await store.verifyCapture("c_sub")).ok, true);
  assertChildLinked(await captureEvents(store, "c_sub"));
});

Deno.test("captureToOtlp() keeps a child session's tool spans under its own root, not under the parent's task span in another trace (host_c subagent)", async () => {
  await using srv = await startServer();
  await using dir = await tempDir();
  const hooks = await loadPlugin(dir.path, srv.url);
  await playHostC(hooks, scenarioFiles(`${HOSTS_DIR}/host_c/subagent`));
  const spans = captureToOtlp(
    "c_sub",
    await captureEvents(srv.store, "c_sub"),
  ).resourceSpans[0].scopeSpans[0].spans;
  assertEquals(new Set(spans.map((s) => s.traceId)).size, 2);
  const tools = spans.filter((s) => s.name.startsWith("execute_tool"));
  assertEquals(tools.length, 2);
  for (const s of spans) {
    if (!s.parentSpanId) continue;
    const parent = spans.find((p) => p.spanId === s.parentSpanId);
    assertOk(parent, `${s.name}: its parent span was exported`);
    assertEquals(parent.traceId, s.traceId, `${s.name}: parent in its trace`);
  }
});

Deno.test("host_a: after a server restart a subagent's calls stay linked to its Agent call, though a second Agent call is now pending (subagent)", async () => {
  await using dir = await tempDir();
  const files = scenarioFiles(`${HOSTS_DIR}/host_a/subagent`);
  const post = async (url: string, body: unknown) => {
    const res = await fetch(`${url}/hook/host_a?cap=a_restart`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    assertEquals(res.status, 204);
  };
  const cut = files.findIndex((f) => f.name.includes("SubagentStart")) + 1;
  {
    using store = new HarnessStore(dir.path, { role: "ingest-server" });
    const server = new IngestServer(store, { port: 0 });
    const url = await server.start();
    for (const f of files.slice(0, cut)) await post(url, f.body);
    await server.close();
  }
  using store = new HarnessStore(dir.path, { role: "ingest-server" });
  const server = new IngestServer(store, { port: 0 });
  const url = await server.start();
  await server.restored; // the restore runs behind the listener
  try {
    const health = await (await fetch(`${url}/health`)).json();
    assertEquals(health.stats.restored_subagent_links, 1);
    // The model starts a second helper of the same kind: two Agent calls
    // pending, so only the link given back from the spool can name it.
    const agentCall = files.find((f) => f.name.includes("003-PreToolUse"))!
      .body as Record<string, unknown>;
    await post(url, { ...agentCall, tool_use_id: "toolu_twin" });
    for (const f of files.slice(cut)) await post(url, f.body);
  } finally {
    await server.close();
  }
  const evs = await captureEvents(store, "a_restart");
  const [agent] = started(evs, "Agent");
  const [bash] = started(evs, "Bash");
  assertEquals(bash.parent_event_id, agent.event_id);
  const stop = evs.find((e) => e.payload.type === "subagent.stopped")!;
  assertEquals(stop.parent_event_id, agent.event_id);
});
