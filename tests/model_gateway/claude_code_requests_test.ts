/**
 * The model requests Claude Code sent in recorded sessions, posted through
 * the real gateway to a local upstream answering as the model did: one
 * episode per session (the session id from `metadata.user_id`), every
 * exchange once, each tool call linked to its result, no host reminder
 * taken for the user's words, the summariser's calls counted, and — when
 * the hooks record the same session — one episode joined with the hooks',
 * the gateway adding the model's side only.
 */
import { assertEquals, assertOk as assert } from "../_assert.ts";
import { startServer } from "../_server.ts";
import { HOSTS_DIR } from "../_helpers.ts";
import type { TraceEvent } from "../../lib/trace/event.ts";
import { inspectCapture } from "../../lib/store/inspect.ts";
import { captureReportData } from "../../lib/report/capture_data.ts";
import {
  recordedRequests,
  type RequestBody,
  sessionOf,
  startRecordedUpstream,
  usageOf,
} from "./_claude_code.ts";

const KEY = "sk-ant-api03-test-key-never-stored-0123456789";

async function post(
  url: string,
  body: RequestBody,
  capture: string,
): Promise<string> {
  const res = await fetch(`${url}/v1/messages?beta=true`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-api-key": KEY,
      "anthropic-version": "2023-06-01",
      "anthropic-beta": "claude-code-20250219",
      "x-harness-capture": capture,
    },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  assertEquals(res.status, 200, text);
  // Every answer names the episode it is recorded under: the session's.
  assertEquals(
    res.headers.get("x-harness-episode"),
    sessionOf(body as RequestBody),
  );
  return text;
}

async function eventsOf(
  s: Awaited<ReturnType<typeof startServer>>,
  capture: string,
): Promise<TraceEvent[]> {
  await s.server.modelGateway!.settled();
  const out: TraceEvent[] = [];
  for await (const ev of s.store.readEvents(capture)) out.push(ev);
  return out;
}

const kinds = (evs: TraceEvent[], kind: string) =>
  evs.filter((e) => e.kind === kind);

/** Every started call of the gateway completes or fails once, linked. */
function assertLinked(evs: TraceEvent[]): void {
  const started = kinds(evs, "tool.call.started");
  const ids = started.map((e) => e.payload.host_call_id);
  assertEquals(new Set(ids).size, ids.length, "a call recorded twice");
  const ends = evs.filter((e) =>
    e.kind === "tool.call.completed" || e.kind === "tool.call.failed"
  );
  assertEquals(
    ends.map((e) => e.parent_event_id).sort(),
    started.map((e) => e.event_id).sort(),
  );
}

for (const scenario of ["basic", "compact", "subagent"]) {
  Deno.test(`Claude Code ${scenario}: one episode, each exchange once, calls linked, tokens the upstream's`, async () => {
    const bodies = recordedRequests(scenario);
    await using up = startRecordedUpstream(bodies);
    await using s = await startServer({
      modelGateway: { upstreamAnthropic: up.url },
    });
    for (const b of bodies) await post(s.url, b, "cc");
    const evs = await eventsOf(s, "cc");
    const session = sessionOf(bodies[0]);
    assertEquals([...new Set(evs.map((e) => e.episode_id))], [session]);
    assertEquals(kinds(evs, "episode.started").length, 1);
    assertEquals(kinds(evs, "model.requested").length, bodies.length);
    const responded = kinds(evs, "model.responded");
    assertEquals(
      responded.map((e) => (e.payload.response as { usage: unknown }).usage),
      bodies.map((_, k) => ({
        input_tokens: usageOf(k).input_tokens,
        output_tokens: usageOf(k).output_tokens,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        total_tokens: usageOf(k).input_tokens + usageOf(k).output_tokens,
      })),
    );
    assertLinked(evs);
    // The query string and the headers reached the upstream unchanged.
    assert(up.received.every((r) => r.path === "/v1/messages?beta=true"));
    assert(up.received.every((r) => r.key === KEY));
    // What the user typed, once; never a host reminder.
    const user = kinds(evs, "message").filter((e) => e.payload.role === "user");
    assert(user.length >= 1);
    assert(
      user.every((e) => !String(e.payload.text).includes("<system-reminder>")),
    );
    assertEquals(
      user.filter((e) => String(e.payload.text).startsWith("Lab scenario"))
        .length,
      1,
    );
    // Tokens per episode are the gateway's: every model call, the
    // summariser's included.
    const inspection = await inspectCapture(s.store, "cc");
    assertEquals(inspection.episodes[0].tokens, {
      input: bodies.reduce((n, _, k) => n + usageOf(k).input_tokens, 0),
      output: bodies.reduce((n, _, k) => n + usageOf(k).output_tokens, 0),
      responses: bodies.length,
      source: "model_gateway",
    });
  });
}

Deno.test("Claude Code basic: the tool calls are the session's, with their failure", async () => {
  const bodies = recordedRequests("basic");
  await using up = startRecordedUpstream(bodies);
  await using s = await startServer({
    modelGateway: { upstreamAnthropic: up.url },
  });
  for (const b of bodies) await post(s.url, b, "cc");
  const evs = await eventsOf(s, "cc");
  assertEquals(
    kinds(evs, "tool.call.started").map((e) =>
      (e.payload.tool as { host_name: string }).host_name
    ),
    ["Read", "Bash", "Write", "Bash"],
  );
  assertEquals(kinds(evs, "tool.call.failed").length, 1);
  assertEquals(kinds(evs, "tool.call.completed").length, 3);
  const assistant = kinds(evs, "message")
    .filter((e) => e.payload.role === "assistant")
    .map((e) => e.payload.text);
  assertEquals(
    assistant.filter((t) => t === "I will read the notes first.").length,
    1,
  );
});

Deno.test("Claude Code with hooks and the gateway: one episode, the hooks' calls, the gateway's tokens", async () => {
  const bodies = recordedRequests("basic");
  const session = sessionOf(bodies[0]);
  await using up = startRecordedUpstream(bodies);
  await using s = await startServer({
    modelGateway: { upstreamAnthropic: up.url },
  });
  const dir = `${HOSTS_DIR}/host_a/basic`;
  const hooks = [...Deno.readDirSync(dir)]
    .map((e) => e.name)
    .filter((n) => n.endsWith(".json"))
    .sort()
    .map((n) => {
      const p = JSON.parse(Deno.readTextFileSync(`${dir}/${n}`));
      // Both sides of one session (the recordings come from two runs).
      return { ...p, session_id: session, transcript_path: undefined };
    });
  const hook = async (p: unknown) => {
    const res = await fetch(`${s.url}/hook/host_a?cap=cc`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(p),
    });
    await res.body?.cancel();
    assert(res.status === 204 || res.status === 200);
  };
  // SessionStart and UserPromptSubmit come before the first model call.
  await hook(hooks[0]);
  await hook(hooks[1]);
  for (const b of bodies) await post(s.url, b, "cc");
  for (const p of hooks.slice(2)) await hook(p);
  const evs = await eventsOf(s, "cc");
  assertEquals([...new Set(evs.map((e) => e.episode_id))], [session]);
  const gateway = evs.filter((e) => e.source.host === "model_gateway");
  assertEquals(
    [...new Set(gateway.map((e) => e.kind))].sort(),
    ["model.requested", "model.responded", "toolset.exposed"],
  );
  assertEquals(kinds(evs, "episode.started").length, 1);
  assertEquals(
    kinds(evs, "tool.call.started").every((e) => e.source.host === "host_a"),
    true,
  );
  const inspection = await inspectCapture(s.store, "cc");
  assertEquals(inspection.episodes[0].tokens?.source, "model_gateway");
  assertEquals(inspection.episodes[0].tokens?.responses, bodies.length);
  // The HTML report counts the same: the gateway's turns alone.
  const report = await captureReportData(s.store, "cc");
  assertEquals(report.episodes[0].turns.length, bodies.length);
  assertEquals(report.episodes[0].tokens, {
    input: inspection.episodes[0].tokens!.input,
    output: inspection.episodes[0].tokens!.output,
  });
});
