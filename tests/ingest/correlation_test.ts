import { assertEquals, assertOk } from "../_assert.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { IngestServer } from "../../lib/ingest/server.ts";
import { ToolCallCorrelator } from "../../lib/adapters/correlator.ts";
import type { TraceEvent } from "../../lib/trace/mod.ts";
import { tempDir } from "../_helpers.ts";

function tool(hook: "BeforeTool" | "AfterTool", session = "s-1") {
  return {
    session_id: session,
    hook_event_name: hook,
    timestamp: "2026-11-22T02:31:28.898Z",
    tool_name: "read_file",
    tool_input: { file_path: "notes.txt" },
    ...(hook === "AfterTool"
      ? { tool_response: { llmContent: "hello", returnDisplay: "" } }
      : {}),
  };
}

async function post(url: string, body: unknown): Promise<void> {
  const res = await fetch(`${url}/hook/host_b?cap=c`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const answer = await res.json();
  assertEquals(answer.ok ?? true, true, JSON.stringify(answer));
}

async function events(store: HarnessStore): Promise<TraceEvent[]> {
  const out: TraceEvent[] = [];
  for await (const ev of store.readEvents("c")) out.push(ev);
  return out;
}

Deno.test("two identical parallel calls with no ids: neither completion gets a link (none is invented for the second)", async () => {
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path, { role: "ingest-server" });
  const server = new IngestServer(store, { port: 0 });
  const url = await server.start();
  try {
    await post(url, tool("BeforeTool"));
    await post(url, tool("BeforeTool"));
    await post(url, tool("AfterTool"));
    await post(url, tool("AfterTool"));
  } finally {
    await server.close();
  }
  const done = (await events(store)).filter((e) =>
    e.kind === "tool.call.completed"
  );
  assertEquals(done.length, 2);
  assertEquals(done.map((e) => e.payload.correlation), [
    "ambiguous",
    "ambiguous",
  ]);
  assertEquals(done.map((e) => e.parent_event_id ?? null), [null, null]);
});

Deno.test("a server restart between a call's start and its completion keeps the link", async () => {
  await using dir = await tempDir();
  {
    using store = new HarnessStore(dir.path, { role: "ingest-server" });
    const server = new IngestServer(store, { port: 0 });
    const url = await server.start();
    await post(url, tool("BeforeTool"));
    await server.close();
  }
  using store = new HarnessStore(dir.path, { role: "ingest-server" });
  const server = new IngestServer(store, { port: 0 });
  const url = await server.start();
  try {
    await post(url, tool("AfterTool"));
    const health = await (await fetch(`${url}/health`)).json();
    assertEquals(health.stats.restored_pending_calls, 1);
  } finally {
    await server.close();
  }
  const evs = await events(store);
  const start = evs.find((e) => e.kind === "tool.call.started")!;
  const done = evs.find((e) => e.kind === "tool.call.completed")!;
  assertEquals(done.parent_event_id, start.event_id);
  assertEquals(done.payload.correlation, "unique_match");
});

Deno.test("pending calls of sessions that never end are bounded, and what was dropped is counted", () => {
  const c = new ToolCallCorrelator({ maxPending: 100 });
  for (let i = 0; i < 150; i++) {
    c.start({
      host: "host_a",
      session: `s${i % 7}`,
      tool: "Bash",
      input: { command: `echo ${i}` },
      callId: `t${i}`,
    }, `evt_${i}`);
  }
  assertEquals([c.size, c.dropped], [100, 50]);
  // The oldest went first: call 0 is gone, call 149 is still there.
  assertEquals(c.isPending("host_a", "s0", "t0"), false);
  assertOk(c.isPending("host_a", `s${149 % 7}`, "t149"));
});

Deno.test("a finished capture takes no more events: hooks get 200 ok:false, /ingest 409, the library a CaptureFinishedError", async () => {
  const { CaptureCoordinator } = await import("../../lib/control/mod.ts");
  const { CaptureFinishedError } = await import("../../lib/store/mod.ts");
  const { annotation } = await import("../../lib/trace/mod.ts");
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path, { role: "ingest-server" });
  const coord = new CaptureCoordinator(store);
  coord.startCapture({ id: "c", activate: false });
  coord.finishCapture("c");
  const before = store.getCapture("c")!.event_count;
  const server = new IngestServer(store, { port: 0 });
  const url = await server.start();
  try {
    const hook = await fetch(`${url}/hook/host_b?cap=c`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(tool("BeforeTool")),
    });
    assertEquals(hook.status, 200);
    const h = await hook.json();
    assertEquals(h.ok, false);
    assertOk(/finished/.test(h.error), h.error);
    const ev = annotation({
      captureId: "c",
      episodeId: "ep_1",
      source: { host: "harness", adapter: "test", model: null },
    }, { type: "note" });
    const ingest = await fetch(`${url}/ingest`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(ev),
    });
    assertEquals(ingest.status, 409);
    await ingest.body?.cancel();
  } finally {
    await server.close();
  }
  let err: unknown = null;
  try {
    coord.markOutcome("c", "ep_1", { success: true });
  } catch (e) {
    err = e;
  }
  assertOk(err instanceof CaptureFinishedError, String(err));
  assertEquals(store.getCapture("c")!.event_count, before);
  assertEquals(store.getCapture("c")!.status, "finished");
});

Deno.test("host_b: the assistant's words come from the streamed answer (not the garbled prompt_response), with token usage per model response; a repeated SessionEnd ends the episode once", async () => {
  const { HOSTS_DIR } = await import("../_helpers.ts");
  const { scenarioFiles } = await import("../_server.ts");
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path, { role: "ingest-server" });
  const server = new IngestServer(store, { port: 0 });
  const url = await server.start();
  const files = scenarioFiles(`${HOSTS_DIR}/host_b/basic`);
  try {
    for (const f of files) await post(url, f.body);
    // The host sent its SessionEnd again.
    await post(url, files[files.length - 1].body);
  } finally {
    await server.close();
  }
  const evs = await events(store);
  const said = evs.filter((e) =>
    e.kind === "message" && e.payload.role === "assistant"
  ).map((e) => e.payload.text);
  assertEquals(said, [
    "I'll start by reading the notes.",
    "Done: read notes.txt, echoed hi, wrote out.txt; the final check failed with exit code 1.",
  ]);
  const usage = evs.filter((e) => e.kind === "model.responded").map((e) =>
    (e.payload.response as { usage?: { input_tokens: number } }).usage
  );
  assertEquals(usage[0], {
    input_tokens: 204,
    output_tokens: 18,
    total_tokens: 222,
  });
  assertEquals(usage.length, 5);
  const { inspectCapture } = await import("../../lib/store/inspect.ts");
  const inspected = await inspectCapture(store, "c");
  assertEquals(inspected.episodes[0].tokens?.responses, 5);
  assertEquals(
    inspected.episodes[0].tokens?.input,
    204 + 306 + 416 + 533 + 659,
  );
  assertEquals(evs.filter((e) => e.kind === "episode.finished").length, 1);
});
