/**
 * Which event closed each tool call: `tool.call.completed` or
 * `tool.call.failed` by the event id of the `tool.call.started` it links to.
 *
 * @module
 */
import type { TraceEvent } from "./event.ts";

/**
 * Map each started call's event id to the event that closed it.
 *
 * @param events Events of one episode (or more).
 * @returns Closing events by the started event's id.
 */
export function completionsByStart(
  events: Iterable<TraceEvent>,
): Map<string, TraceEvent> {
  const ends = new Map<string, TraceEvent>();
  for (const ev of events) {
    if (
      (ev.kind === "tool.call.completed" || ev.kind === "tool.call.failed") &&
      ev.parent_event_id
    ) ends.set(ev.parent_event_id, ev);
  }
  return ends;
}
