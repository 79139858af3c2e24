import { assertEquals, assertOk } from "../_assert.ts";
import { HOSTS_DIR } from "../_helpers.ts";
import { scenarioFiles } from "../_server.ts";
import { hostAToEvents } from "../../lib/adapters/claude_code.ts";
import { hostBToEvents } from "../../lib/adapters/gemini_cli.ts";
import { ToolCallCorrelator } from "../../lib/adapters/correlator.ts";
import { SessionMemory } from "../../lib/adapters/session_memory.ts";
import type { UnsealedEvent } from "../../lib/trace/event.ts";

type Adapter = typeof hostAToEvents;

function run(adapter: Adapter, dir: string): UnsealedEvent[] {
  const options = {
    captureId: "cap",
    correlator: new ToolCallCorrelator(),
    sessions: new SessionMemory(),
  };
  return scenarioFiles(dir).flatMap((f) => adapter(f.body, options));
}

function errorOf(e: UnsealedEvent): Record<string, unknown> {
  return e.payload.error as Record<string, unknown>;
}

Deno.test("hostBToEvents() with AfterModel gives the host's token counts and the answer once", () => {
  const dir = `${HOSTS_DIR}/host_b/basic`;
  const evs = run(hostBToEvents, dir);
  // What the host reported: usageMetadata of each finished model call.
  let want = 0, calls = 0;
  for (const f of scenarioFiles(dir)) {
    const b = f.body as {
      hook_event_name: string;
      llm_response?: { usageMetadata?: { promptTokenCount: number } };
    };
    const u = b.llm_response?.usageMetadata;
    if (b.hook_event_name === "AfterModel" && u) {
      want += u.promptTokenCount;
      calls++;
    }
  }
  const turns = evs.filter((e) => e.kind === "model.responded");
  assertEquals(turns.length, calls);
  assertEquals(
    turns.reduce(
      (s, e) =>
        s + (e.payload.response as { usage: { input_tokens: number } }).usage
          .input_tokens,
      0,
    ),
    want,
  );
  const said = evs.filter((e) =>
    e.kind === "message" && e.payload.role === "assistant"
  ).map((e) => e.payload.text);
  assertEquals(said, [
    "I'll start by reading the notes.",
    "Done: read notes.txt, echoed hi, wrote out.txt; the final check failed with exit code 1.",
  ]);
  // AfterAgent's own words are kept, not as a second answer.
  assertOk(evs.some((e) => e.payload.type === "agent.responded"));
  assertEquals(
    evs.filter((e) => e.payload.type === "compaction.checked").length,
    5,
  );
});

Deno.test("hostBToEvents() without AfterModel still records AfterAgent's answer", () => {
  const files = scenarioFiles(`${HOSTS_DIR}/host_b/basic`).filter((f) =>
    !f.name.includes("AfterModel")
  );
  const options = { captureId: "cap", sessions: new SessionMemory() };
  const evs = files.flatMap((f) => hostBToEvents(f.body, options));
  const said = evs.filter((e) =>
    e.kind === "message" && e.payload.role === "assistant"
  );
  assertEquals(said.length, 1);
});

Deno.test("a shell command's non-zero exit is a failed call with its exit code on host_a and host_b", () => {
  for (
    const [adapter, dir] of [
      [hostAToEvents, `${HOSTS_DIR}/host_a/basic`],
      [hostBToEvents, `${HOSTS_DIR}/host_b/basic`],
    ] as const
  ) {
    const failed = run(adapter, dir).filter((e) =>
      e.kind === "tool.call.failed"
    );
    assertEquals(failed.length, 1, dir);
    assertEquals(
      [
        errorOf(failed[0]).type,
        errorOf(failed[0]).exit_code,
        errorOf(failed[0]).outcome,
      ],
      ["exit_code", 1, "failed"],
      dir,
    );
  }
});

Deno.test("hostAToEvents() marks calls that never ran as refused and real failures as failed", () => {
  const denied = run(hostAToEvents, `${HOSTS_DIR}/host_a/denied`)
    .filter((e) => e.kind === "tool.call.failed");
  assertEquals(denied.map((e) => errorOf(e).outcome), ["refused", "refused"]);
  const mcp = run(hostAToEvents, `${HOSTS_DIR}/host_a/mcp`)
    .filter((e) => e.kind === "tool.call.failed");
  assertOk(mcp.length > 0);
  for (const e of mcp) assertEquals(errorOf(e).outcome, "failed");
});

Deno.test("hostAToEvents() records compaction with what the host said", () => {
  const options = { captureId: "cap" };
  const base = { session_id: "s1", transcript_path: "/x", cwd: "/w" };
  const evs = [
    hostAToEvents({
      ...base,
      hook_event_name: "PreCompact",
      trigger: "manual",
      custom_instructions: "keep ids",
    }, options),
    hostAToEvents({
      ...base,
      hook_event_name: "PostCompact",
      trigger: "manual",
      compact_summary: "short",
    }, options),
  ].flat();
  assertEquals(evs.map((e) => [e.payload.type, e.payload.trigger]), [
    ["compaction.started", "manual"],
    ["compaction.finished", "manual"],
  ]);
  assertEquals(evs[0].payload.custom_instructions, "keep ids");
  assertEquals(evs[1].payload.compact_summary, "short");
  assertEquals(evs[0].payload.transcript_path, undefined);
});
