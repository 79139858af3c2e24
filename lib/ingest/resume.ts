/**
 * Pending tool calls survive a server restart: at start the server reads
 * the open captures' spools and gives the correlator back every call that
 * started and has not completed (and whose session has not ended), so a
 * completion that arrives after the restart still links to its start.
 *
 * @module
 */
import type { HarnessStore } from "../store/store.ts";
import type { CallKey, ToolCallCorrelator } from "../adapters/correlator.ts";
import { canonicalJson } from "../trace/canonical_json.ts";

const HOSTS = new Set(["host_a", "host_b", "host_c"]);

/**
 * Restore pending calls from the spools of open captures.
 *
 * @param store The store.
 * @param correlator The server's correlator.
 * @returns How many calls were restored.
 */
export async function restorePending(
  store: HarnessStore,
  correlator: ToolCallCorrelator,
): Promise<number> {
  let restored = 0;
  for (const cap of store.listCaptures()) {
    if (cap.status !== "open") continue;
    const open = new Map<string, CallKey>();
    const shapeOf = (k: CallKey) =>
      `${k.host}\u0000${k.session}\u0000${k.tool}\u0000${
        canonicalJson(k.input)
      }`;
    for await (const ev of store.readEvents(cap.capture_id)) {
      const host = ev.source?.host ?? "";
      if (!HOSTS.has(host)) continue;
      if (ev.kind === "tool.call.started") {
        const tool = ev.payload.tool as { host_name: string };
        open.set(ev.event_id, {
          host,
          session: ev.episode_id,
          tool: tool.host_name,
          input: (ev.payload.arguments ?? {}) as Record<string, unknown>,
          callId: (ev.payload.host_call_id as string | undefined) ?? null,
        });
      } else if (
        ev.kind === "tool.call.completed" || ev.kind === "tool.call.failed"
      ) {
        if (ev.parent_event_id) open.delete(ev.parent_event_id);
        else if (ev.payload.correlation === "ambiguous") {
          // The live correlator closed the oldest call of that shape.
          const tool = ev.payload.tool as { host_name: string };
          const shape = shapeOf({
            host,
            session: ev.episode_id,
            tool: tool.host_name,
            input: (ev.payload.arguments ?? {}) as Record<string, unknown>,
          });
          for (const [id, k] of open) {
            if (!k.callId && shapeOf(k) === shape) {
              open.delete(id);
              break;
            }
          }
        }
      } else if (ev.kind === "episode.finished") {
        for (const [id, k] of open) {
          if (k.host === host && k.session === ev.episode_id) open.delete(id);
        }
      }
    }
    for (const [id, key] of open) {
      correlator.start(key, id);
      restored++;
    }
  }
  return restored;
}
