/**
 * What the hook adapters remember survives a server restart: at start the
 * server reads the open captures' spools once and gives back
 *
 * - to the correlator, every call that started and has not completed (and
 *   whose session has not ended), so a completion that arrives after the
 *   restart still links to its start;
 * - to the session memory, the subagent links already made (host_a: a
 *   subagent's call or mark that points to an Agent/Task call; host_c: a
 *   child session's `episode.started` that points to the parent's `task`
 *   call), so the subagent's later events are linked to the same call.
 *
 * The rest of the session memory (a streamed answer's pieces, a held
 * answer, which sessions ended) is not rebuilt.
 *
 * @module
 */
import type { HarnessStore } from "../store/store.ts";
import type { CallKey, ToolCallCorrelator } from "../adapters/correlator.ts";
import type { SessionMemory } from "../adapters/session_memory.ts";
import { canonicalJson } from "../trace/canonical_json.ts";
import type { TraceEvent } from "../trace/event.ts";
import { HOST_TABLE } from "../trace/hosts.ts";

/** The seed names of the hosts (`source.host` of their records). */
const HOSTS = new Set<string>(HOST_TABLE.map((h) => h.seed));

/**
 * The restore gives the event loop a turn (a timer: only that lets the
 * listener read sockets, `lib/otel/bounded_steps.ts`) after this much work,
 * so the listener answers during a restore (issue 44). A turn costs 1–4 ms
 * (Deno clamps nested timers): 5 ms slices made the restore of 300,000
 * events 1.6x slower, 16 ms about as fast as none, with `/health` during
 * it at most 35–44 ms instead of 74–139 ms (load 4, this machine).
 */
const SLICE_MS = 16;

/** Where the restored state goes. */
export interface HookState {
  /** The server's correlator. */
  correlator: ToolCallCorrelator;
  /** The server's session memory (no links restored without it). */
  sessions?: SessionMemory | null;
  /** Stops the reading (the server is closing): what was read is kept. */
  signal?: AbortSignal;
}

/** What was given back. */
export interface RestoredHookState {
  /** Pending calls given back to the correlator. */
  pending: number;
  /** Subagent links given back to the session memory. */
  subagents: number;
}

/**
 * Restore pending calls and subagent links from the spools of open
 * captures.
 *
 * @param store The store.
 * @param state The correlator and session memory to fill, and a signal
 *   that stops the reading.
 * @returns How many calls and links were restored.
 */
export async function restoreHookState(
  store: HarnessStore,
  state: HookState,
): Promise<RestoredHookState> {
  const restored = { pending: 0, subagents: 0 };
  const { signal } = state;
  let until = performance.now() + SLICE_MS;
  for (const cap of store.listCaptures()) {
    if (cap.status !== "open") continue;
    if (signal?.aborted) break;
    const open = new OpenCalls();
    for await (const ev of store.readEvents(cap.capture_id)) {
      if (signal?.aborted) break;
      // The listener answers meanwhile: give it the loop every few ms.
      if (performance.now() >= until) {
        await new Promise((r) => setTimeout(r, 0));
        until = performance.now() + SLICE_MS;
      }
      const host = ev.source?.host ?? "";
      if (!HOSTS.has(host)) continue;
      open.take(ev, host);
      if (state.sessions && restoreLink(state.sessions, ev, host)) {
        restored.subagents++;
      }
    }
    // A spool read only in part gives back nothing of its calls.
    if (signal?.aborted) break;
    for (const [id, key] of open.calls) {
      state.correlator.start(key, id);
      restored.pending++;
    }
  }
  return restored;
}

/**
 * Give the session memory back the subagent link an event records.
 *
 * @returns True when the event recorded one.
 */
function restoreLink(
  memory: SessionMemory,
  ev: TraceEvent,
  host: string,
): boolean {
  const call = ev.parent_event_id;
  if (!call) return false;
  const p = ev.payload;
  if (
    host === "host_c" && ev.kind === "episode.started" &&
    typeof p.parent_session_id === "string"
  ) {
    const child = ev.episode_id;
    memory.linkSubagent(
      { host, session: p.parent_session_id, agent: child },
      call,
    );
    memory.setStartedBy(host, child, call);
    return true;
  }
  const agent = p.agent_id;
  if (
    host === "host_a" && typeof agent === "string" &&
    (ev.kind === "tool.call.started" || p.type === "subagent.started") &&
    memory.subagentCall({ host, session: ev.episode_id, agent }) === null
  ) {
    memory.linkSubagent({ host, session: ev.episode_id, agent }, call);
    return true;
  }
  return false;
}

/** The calls of one spool still open at its end, read event by event. */
class OpenCalls {
  /** Start event id → the call. */
  readonly calls = new Map<string, CallKey>();

  static #shape(k: CallKey): string {
    return `${k.host}\u0000${k.session}\u0000${k.tool}\u0000${
      canonicalJson(k.input)
    }`;
  }

  /** Take one event of the spool. */
  take(ev: TraceEvent, host: string): void {
    if (ev.kind === "tool.call.started") {
      const tool = ev.payload.tool as { host_name: string };
      this.calls.set(ev.event_id, {
        host,
        session: ev.episode_id,
        tool: tool.host_name,
        input: (ev.payload.arguments ?? {}) as Record<string, unknown>,
        callId: (ev.payload.host_call_id as string | undefined) ?? null,
      });
    } else if (
      ev.kind === "tool.call.completed" || ev.kind === "tool.call.failed"
    ) {
      if (ev.parent_event_id) this.calls.delete(ev.parent_event_id);
      else if (ev.payload.correlation === "ambiguous") {
        // The live correlator closed the oldest call of that shape.
        const tool = ev.payload.tool as { host_name: string };
        const shape = OpenCalls.#shape({
          host,
          session: ev.episode_id,
          tool: tool.host_name,
          input: (ev.payload.arguments ?? {}) as Record<string, unknown>,
        });
        for (const [id, k] of this.calls) {
          if (!k.callId && OpenCalls.#shape(k) === shape) {
            this.calls.delete(id);
            break;
          }
        }
      }
    } else if (ev.kind === "episode.finished") {
      for (const [id, k] of this.calls) {
        if (k.host === host && k.session === ev.episode_id) {
          this.calls.delete(id);
        }
      }
    }
  }
}
