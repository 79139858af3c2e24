/**
 * Test helpers for the OpenTelemetry tests: a capture's events, and its
 * tool calls in a form two captures can be compared by.
 *
 * @module
 */
import type { HarnessStore } from "../../lib/store/mod.ts";
import type { TraceEvent } from "../../lib/trace/mod.ts";

/** Every event of a capture, in order. */
export async function eventsOf(
  store: HarnessStore,
  id: string,
): Promise<TraceEvent[]> {
  const out: TraceEvent[] = [];
  for await (const ev of store.readEvents(id)) out.push(ev);
  return out;
}

/** The closed tool calls: episode, kind, tool, arguments, result, error. */
export function calls(events: TraceEvent[]): {
  episode: string;
  kind: string;
  tool: string;
  arguments: unknown;
  result: unknown;
  error: string | null;
}[] {
  return events.filter((e) =>
    e.kind.startsWith("tool.call.") && e.kind !== "tool.call.started"
  ).map((e) => ({
    episode: e.episode_id,
    kind: e.kind,
    tool: (e.payload.tool as { host_name: string }).host_name,
    arguments: e.payload.arguments,
    result: e.payload.result ?? null,
    error: (e.payload.error as { message?: string })?.message ?? null,
  }));
}
