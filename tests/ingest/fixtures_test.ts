import { assertEquals, assertOk } from "../_assert.ts";
import type { TraceEvent } from "../../lib/trace/mod.ts";
import { hostCPluginSource } from "../../lib/installers/host_c_plugin.ts";
import { HOSTS_DIR, tempDir } from "../_helpers.ts";
import { scenarioDirs, scenarioFiles, startServer } from "../_server.ts";

const HOSTS = `${HOSTS_DIR}`;

function scenarios(host: string): string[] {
  return scenarioDirs(`${HOSTS}/${host}`);
}

async function events(
  store: { readEvents(id: string): AsyncGenerator<TraceEvent> },
  cap: string,
) {
  const out: TraceEvent[] = [];
  for await (const e of store.readEvents(cap)) out.push(e);
  return out;
}

/** Checks every capture of a host must pass. */
function checkLinks(evs: TraceEvent[], label: string): void {
  const byId = new Map(evs.map((e) => [e.event_id, e]));
  const started = evs.filter((e) => e.kind === "tool.call.started");
  const closed = evs.filter((e) =>
    e.kind === "tool.call.completed" || e.kind === "tool.call.failed"
  );
  for (const c of closed) {
    assertOk(c.parent_event_id, `${label}: ${c.kind} without parent`);
    const parent = byId.get(c.parent_event_id!)!;
    assertEquals(parent.kind, "tool.call.started", label);
    assertEquals(parent.episode_id, c.episode_id, label);
    assertEquals(
      (parent.payload.tool as { host_name: string }).host_name,
      (c.payload.tool as { host_name: string }).host_name,
      label,
    );
    if (c.payload.host_call_id) {
      assertEquals(parent.payload.host_call_id, c.payload.host_call_id, label);
    }
    assertOk(parent.sequence < c.sequence, label);
  }
  // Every started call is closed (completed, failed or refused).
  assertEquals(
    new Set(closed.map((c) => c.parent_event_id)).size,
    started.length,
    label,
  );
}

Deno.test("host_a: every recorded payload through the real server gives the right events, links and a verifying chain", async () => {
  await using srv = await startServer();
  for (const scenario of scenarios("host_a")) {
    const files = scenarioFiles(`${HOSTS}/host_a/${scenario}`);
    const cap = `a_${scenario.replaceAll("/", "_")}`;
    for (const f of files) {
      const res = await fetch(`${srv.url}/hook/host_a?cap=${cap}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(f.body),
      });
      assertEquals(
        res.status,
        204,
        `${scenario}/${f.name}: ${await res.text()}`,
      );
    }
    assertEquals((await srv.store.verifyCapture(cap)).ok, true, scenario);
    const evs = await events(srv.store, cap);
    checkLinks(evs, scenario);
    const sessions = new Set(
      files.map((f) => (f.body as { session_id: string }).session_id),
    );
    assertEquals(new Set(evs.map((e) => e.episode_id)), sessions, scenario);
    const pre = files.filter((f) => f.name.includes("PreToolUse")).length;
    assertEquals(
      evs.filter((e) => e.kind === "tool.call.started").length,
      pre,
      scenario,
    );
    for (const e of evs) assertEquals(e.source.host, "host_a");
  }
  const basic = await events(srv.store, "a_basic");
  assertEquals(basic.map((e) => e.kind), [
    "episode.started",
    "message",
    "tool.call.started",
    "tool.call.completed",
    "tool.call.started",
    "tool.call.completed",
    "tool.call.started",
    "tool.call.completed",
    "tool.call.started",
    "tool.call.failed",
    "message",
    "episode.finished",
  ]);
  assertEquals(
    (basic[9].payload.error as { message: string }).message,
    "Exit code 1\npartial-out\nboom-err",
  );
  // Refused calls never complete: they show as failed, not_executed.
  const denied = await events(srv.store, "a_denied");
  const refused = denied.filter((e) => e.kind === "tool.call.failed");
  assertEquals(refused.length, 2);
  for (const r of refused) {
    assertEquals((r.payload.error as { type: string }).type, "not_executed");
  }
  assertEquals(
    denied.some((e) =>
      e.kind === "annotation" && e.payload.type === "permission.requested"
    ),
    true,
  );
  // Structured MCP results are kept whole, and parsed.
  const mcp = await events(srv.store, "a_mcp");
  const structured = mcp.find((e) =>
    e.payload.structured_result !== undefined
  )!;
  assertEquals(structured.payload.structured_result, {
    temperature: 36,
    conditions: "Light rain / drizzle",
    humidity: 82,
  });
  assertEquals(
    (structured.payload.tool as { logical_id: string }).logical_id,
    "mcp:everything/get-structured-content",
  );
  // Parallel calls arriving out of order still link by id.
  const parallel = await events(srv.store, "a_parallel");
  assertEquals(
    parallel.filter((e) => e.payload.correlation === "host_call_id").length,
    3,
  );
  // Subagent calls stay in the parent's episode and carry the agent id.
  const sub = await events(srv.store, "a_subagent");
  assertOk(
    sub.some((e) =>
      e.kind === "tool.call.started" &&
      e.payload.agent_id === "a04f0f20bee881c0d"
    ),
  );
});

Deno.test("host_b: every recorded payload gives calls linked without ids, real errors as failures, no full model requests", async () => {
  await using srv = await startServer();
  // `gateway` holds a session through the model gateway (model exchanges
  // beside the hook payloads, another day): its own test plays it
  // (`tests/installers/gemini_gateway_replay_test.ts`).
  for (const scenario of scenarios("host_b").filter((s) => s !== "gateway")) {
    for (const f of scenarioFiles(`${HOSTS}/host_b/${scenario}`)) {
      const res = await fetch(`${srv.url}/hook/host_b?cap=b_${scenario}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(f.body),
      });
      const body = await res.json();
      assertEquals(
        [res.status, body.ok],
        [200, true],
        `${scenario}/${f.name}: ${body.error}`,
      );
    }
    const cap = `b_${scenario}`;
    assertEquals((await srv.store.verifyCapture(cap)).ok, true, scenario);
    const evs = await events(srv.store, cap);
    checkLinks(evs, scenario);
    for (const e of evs.filter((e) => e.kind === "model.requested")) {
      const req = e.payload.request as Record<string, unknown>;
      assertEquals(req.messages, undefined, "full model request stored");
      assertOk(String(req.digest).startsWith("sha256:"));
    }
    // The host's own timestamps are kept.
    assertOk(
      evs.every((e) => e.timestamp.startsWith("2026-11-22T02:31")),
      scenario,
    );
  }
  const errs = await events(srv.store, "b_toolerrors");
  const failed = errs.filter((e) => e.kind === "tool.call.failed");
  assertOk(failed.length >= 1);
  assertEquals(
    (failed[0].payload.error as { type: string }).type,
    "file_not_found",
  );
  const resume = await events(srv.store, "b_resume");
  assertEquals(
    resume.filter((e) => e.kind === "episode.started").map((e) =>
      e.payload.reason
    ),
    ["startup", "resume"],
  );
  assertEquals(new Set(resume.map((e) => e.episode_id)).size, 1);
});

Deno.test("host_c: the real plugin turns every recorded hook into envelopes the server maps right, refusals and ends included", async () => {
  await using srv = await startServer();
  await using dir = await tempDir();
  for (const scenario of scenarios("host_c")) {
    const file = `${dir.path}/plugin_${scenario}.js`;
    Deno.writeTextFileSync(
      file,
      hostCPluginSource({ url: srv.url }).replace(
        '"/hook/host_c"',
        `"/hook/host_c?cap=c_${scenario}"`,
      ).replace('(cap ? "?cap=" + encodeURIComponent(cap) : "")', '""'),
    );
    const mod = await import(`file://${file}`);
    const hooks = await mod.HarnessPlugin({});
    const files = scenarioFiles(`${HOSTS}/host_c/${scenario}`);
    let befores = 0;
    for (const f of files) {
      const rec = f.body as { hook: string; input: unknown; output: unknown };
      if (rec.hook === "tool.execute.before") befores++;
      const fn = hooks[rec.hook];
      if (typeof fn !== "function") continue;
      if (rec.hook === "config") await fn(rec.input);
      else if (rec.hook === "event") await fn(rec.input);
      else if (rec.hook === "dispose") await fn();
      else await fn(rec.input, rec.output);
    }
    const cap = `c_${scenario}`;
    assertEquals((await srv.store.verifyCapture(cap)).ok, true, scenario);
    const evs = await events(srv.store, cap);
    checkLinks(evs, scenario);
    assertEquals(
      evs.filter((e) => e.kind === "tool.call.started").length,
      befores,
      scenario,
    );
    const startedEps = evs.filter((e) => e.kind === "episode.started").map((
      e,
    ) => e.episode_id);
    const finishedEps = evs.filter((e) => e.kind === "episode.finished").map((
      e,
    ) => e.episode_id);
    assertEquals(
      new Set(finishedEps),
      new Set(startedEps),
      `${scenario}: every session ends`,
    );
    // The provider key handed to the plugin is never stored.
    const spool = Deno.readTextFileSync(srv.store.spoolPath(cap));
    assertEquals(spool.includes("fake-key"), false, scenario);
  }
  const perm = await events(srv.store, "c_permission");
  const refused = perm.filter((e) => e.kind === "tool.call.failed");
  assertOk(
    refused.some((e) =>
      /rejected permission/.test(
        (e.payload.error as { message: string }).message,
      )
    ),
  );
  const mcp = await events(srv.store, "c_mcp");
  assertOk(
    mcp.some((e) =>
      (e.payload.tool as { logical_id: string } | undefined)?.logical_id ===
        "mcp:everything/echo"
    ),
  );
  const sub = await events(srv.store, "c_subagent");
  assertOk(
    sub.some((e) =>
      e.kind === "episode.started" &&
      typeof e.payload.parent_session_id === "string"
    ),
  );
  const user = perm.find((e) => e.kind === "message")!;
  assertEquals(user.payload.role, "user");
  // Every finished assistant message is a model response with its tokens.
  const basic = await events(srv.store, "c_basic");
  const responses = basic.filter((e) => e.kind === "model.responded");
  assertEquals(responses.length, 6);
  assertEquals(
    (responses[0].payload.response as { usage: unknown }).usage,
    {
      input_tokens: 2470,
      output_tokens: 38,
      total_tokens: 2508,
      reasoning_tokens: 0,
    },
  );
});

Deno.test("host_c: the plugin waits for posts in flight when OpenCode disposes it, and a model error marks the episode failed", async () => {
  await using srv = await startServer();
  await using dir = await tempDir();
  const file = `${dir.path}/plugin.js`;
  Deno.writeTextFileSync(
    file,
    hostCPluginSource({ url: srv.url, capture: "c_dispose" }),
  );
  const mod = await import(`file://${file}`);
  const hooks = await mod.HarnessPlugin({});
  const session = (id: string) => ({
    event: {
      type: "session.created",
      properties: { info: { id } },
    },
  });
  await hooks.event(session("ses_a"));
  await hooks.event(session("ses_b"));
  await hooks.event({
    event: {
      type: "session.error",
      properties: { sessionID: "ses_b", error: { name: "APIError" } },
    },
  });
  // OpenCode does not await bus events: the deletion is still in flight.
  hooks.event({
    event: { type: "session.deleted", properties: { info: { id: "ses_a" } } },
  });
  await hooks.dispose();
  const evs = await events(srv.store, "c_dispose");
  const ends = evs.filter((e) => e.kind === "episode.finished").map((
    e,
  ) => [e.episode_id, e.payload.reason]).sort();
  assertEquals(ends, [["ses_a", "session.deleted"], ["ses_b", "disposed"]]);
  const outcome = evs.find((e) =>
    e.kind === "annotation" && e.payload.type === "episode.outcome"
  )!;
  assertEquals([outcome.episode_id, outcome.payload.success], ["ses_b", false]);
});
