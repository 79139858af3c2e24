import { assertEquals, assertOk } from "../_assert.ts";
import { HOSTS_DIR, tempDir } from "../_helpers.ts";
import { scenarioFiles, startServer } from "../_server.ts";
import { hostAToEvents } from "../../lib/adapters/host_a.ts";
import { ToolCallCorrelator } from "../../lib/adapters/correlator.ts";
import { SessionMemory } from "../../lib/adapters/session_memory.ts";
import { hostCPluginSource } from "../../lib/installers/host_c_plugin.ts";
import type { TraceEvent } from "../../lib/trace/event.ts";
import { captureEvents } from "./_host_a_replay.ts";

const SUBAGENT = "a04f0f20bee881c0d";

function started(evs: TraceEvent[], tool: string): TraceEvent[] {
  return evs.filter((e) =>
    e.kind === "tool.call.started" &&
    (e.payload.tool as { host_name: string }).host_name === tool
  );
}

Deno.test("host_a: a subagent's calls and its start and stop are linked to the Agent call that started it (subagent)", async () => {
  await using srv = await startServer();
  for (const f of scenarioFiles(`${HOSTS_DIR}/host_a/subagent`)) {
    const res = await fetch(`${srv.url}/hook/host_a?cap=a_sub`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(f.body),
    });
    assertEquals(res.status, 204, f.name);
  }
  assertEquals((await srv.store.verifyCapture("a_sub")).ok, true);
  const evs = await captureEvents(srv.store, "a_sub");
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

Deno.test("host_c: a child session's start is linked to the parent's task call (subagent)", async () => {
  await using srv = await startServer();
  await using dir = await tempDir();
  const file = `${dir.path}/plugin.js`;
  Deno.writeTextFileSync(
    file,
    hostCPluginSource({ url: srv.url, capture: "c_sub" }),
  );
  const hooks = await (await import(`file://${file}`)).HarnessPlugin({});
  for (const f of scenarioFiles(`${HOSTS_DIR}/host_c/subagent`)) {
    const r = f.body as { hook: string; input: unknown; output: unknown };
    const fn = hooks[r.hook];
    if (typeof fn !== "function") continue;
    if (r.hook === "dispose") await fn();
    else if (r.hook === "config" || r.hook === "event") await fn(r.input);
    else await fn(r.input, r.output);
  }
  assertEquals((await srv.store.verifyCapture("c_sub")).ok, true);
  const evs = await captureEvents(srv.store, "c_sub");
  const [task] = started(evs, "task");
  const starts = evs.filter((e) => e.kind === "episode.started");
  assertEquals(starts.length, 2);
  const child = starts.find((e) => e.payload.parent_session_id)!;
  assertEquals(child.payload.parent_session_id, task.episode_id);
  assertEquals(child.parent_event_id, task.event_id);
  const root = starts.find((e) => !e.payload.parent_session_id)!;
  assertEquals(root.parent_event_id, null);
});
