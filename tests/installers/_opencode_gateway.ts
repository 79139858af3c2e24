/**
 * Test helper: what one OpenCode session recorded with `install opencode
 * --gateway` must look like in the capture, read from a real server: one
 * episode (the session id), the plugin's tool calls and texts each once,
 * the gateway's model requests and answers each once, failures recorded as
 * failures, the title call inside the episode as a side call, and the
 * episode's tokens the host's own.
 *
 * @module
 */
import { assertEquals, assertOk } from "../_assert.ts";
import type { TraceEvent } from "../../lib/trace/event.ts";
import { inspectCapture } from "../../lib/store/inspect.ts";
import type { HarnessStore } from "../../lib/store/mod.ts";

/** What the host itself reported. */
export interface HostSide {
  /** Its session id. */
  session: string;
  /** The sum of its steps' tokens. */
  tokens: { input: number; output: number; steps: number };
  /** Model requests the upstream got (the steps and the title call). */
  requests: number;
}

const kinds = (evs: TraceEvent[], kind: string) =>
  evs.filter((e) => e.kind === kind);

/**
 * Check the capture of one scripted session (`_opencode_model.ts`'s
 * policy) against what the host reported.
 *
 * @param store The server's store.
 * @param capture The capture.
 * @param host The host's side.
 * @returns The capture's events.
 */
export async function assertOneEpisode(
  store: HarnessStore,
  capture: string,
  host: HostSide,
): Promise<TraceEvent[]> {
  const evs: TraceEvent[] = [];
  for await (const e of store.readEvents(capture)) evs.push(e);
  const label = evs.map((e) =>
    `${e.sequence} ${e.source.host} ${e.kind} ${e.episode_id}`
  ).join("\n");
  assertEquals((await store.verifyCapture(capture)).ok, true);
  // One episode: the session's.
  assertEquals(
    [...new Set(evs.map((e) => e.episode_id))],
    [host.session],
    label,
  );
  assertEquals(kinds(evs, "episode.started").length, 1, label);
  assertEquals(kinds(evs, "episode.finished").length, 1, label);
  // The gateway adds the model's side only; the plugin owns the rest.
  const bySource = (src: string) =>
    [...new Set(evs.filter((e) => e.source.host === src).map((e) => e.kind))]
      .sort();
  assertEquals(bySource("model_gateway"), [
    "model.requested",
    "model.responded",
    "toolset.exposed",
  ]);
  assertEquals(bySource("host_c"), [
    "episode.finished",
    "episode.started",
    "message",
    "tool.call.completed",
    "tool.call.failed",
    "tool.call.started",
  ]);
  // Each model call once (the steps and the title call).
  assertEquals(kinds(evs, "model.requested").length, host.requests);
  assertEquals(kinds(evs, "model.responded").length, host.requests);
  // Each tool call once, closed once, with the plugin's outcome.
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
  const outcome = (e: TraceEvent) => {
    const tool = (e.payload.tool as { host_name: string }).host_name;
    if (e.kind === "tool.call.completed") return `${tool} completed`;
    const err = e.payload.error as { outcome?: string; type?: string };
    return `${tool} ${err.outcome}${err.type ? ` ${err.type}` : ""}`;
  };
  assertEquals(ends.map(outcome), [
    "read completed",
    "bash failed exit_code",
    "read failed",
    "bash refused",
  ]);
  // Each text once: the user's prompt, the model's two texts.
  const said = kinds(evs, "message").map((e) =>
    `${e.payload.role}: ${
      String(e.payload.text).replace(/^"/, "").slice(0, 20)
    }`
  );
  assertEquals(said, [
    "user: Read notes.txt, then",
    "assistant: Reading the notes fi",
    "assistant: The notes say the re",
  ]);
  // The title call: inside the episode, marked as a side call.
  const side = kinds(evs, "model.responded").filter((e) => e.payload.side_call);
  assertEquals(side.length, 1, "the title call is the one side call");
  assertEquals(
    (side[0].payload.side_call as { kind: string }).kind,
    "title",
  );
  // The episode's tokens are the host's.
  const inspection = await inspectCapture(store, capture);
  const t = inspection.episodes[0].tokens;
  assertEquals(
    [t?.input, t?.output, t?.responses],
    [host.tokens.input, host.tokens.output, host.tokens.steps],
  );
  assertEquals(inspection.episodes[0].incomplete_calls, 0);
  assertOk(inspection.episodes[0].finished);
  return evs;
}
