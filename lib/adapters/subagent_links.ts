/**
 * Which Agent/Task call started a subagent. host_a runs a subagent's tool
 * calls in the parent's session (they carry `agent_id`); host_c gives a
 * subagent its own child session (`parent_session_id`). Neither names the
 * call that started it, so the link is made the way the correlator links
 * calls without an id: when exactly one call of a delegating tool is
 * pending in the parent session and not yet linked to another subagent
 * (several of the same kind at once: no link is invented).
 *
 * Once linked, every event of the subagent that has no parent of its own
 * points to that call's `tool.call.started` ({@linkcode linkToCall}): its
 * tool calls' starts, its messages and model answers, its marks and (host_c)
 * the child session's start and end. A completion keeps pointing to its own
 * start (the contract's `parent_event_id`), so from any event of a subagent a
 * reader reaches the call that started it in at most two steps.
 *
 * @module
 */
import type { UnsealedEvent } from "../trace/event.ts";
import type { ToolCallCorrelator } from "./correlator.ts";
import type { SessionMemory } from "./session_memory.ts";

/** A subagent seen in a payload, and how its starting call looks. */
export interface SubagentSighting {
  /** Host name. */
  host: string;
  /** The session that started the subagent. */
  session: string;
  /** The subagent: host_a's `agent_id`, host_c's child session id. */
  agent: string;
  /** Host tool names that start subagents (`Agent`, `Task`; `task`). */
  tools: readonly string[];
  /** The subagent's type, matched to a call's `subagent_type` when several are pending. */
  agentType?: string | null;
}

/** The ingest process's state the link needs. */
export interface SubagentState {
  /** Pending calls. */
  correlator: ToolCallCorrelator | null;
  /** Links already made. */
  memory: SessionMemory | null;
}

/**
 * The start event of the call that started a subagent: the one already
 * linked, else the only pending unlinked call of a delegating tool (then
 * remembered).
 *
 * @param seen The subagent.
 * @param state Correlator and session memory.
 * @returns The event id, or null when no single call can be named.
 */
export function subagentCall(
  seen: SubagentSighting,
  state: SubagentState,
): string | null {
  const { correlator, memory } = state;
  const known = memory?.subagentCall(seen);
  if (known) return known;
  if (!correlator) return null;
  const taken = memory?.linkedCalls(seen.host, seen.session) ?? new Set();
  let calls = correlator.pending(seen.host, seen.session).filter((c) =>
    seen.tools.includes(c.tool) && !taken.has(c.event_id)
  );
  if (calls.length > 1 && seen.agentType) {
    calls = calls.filter((c) => c.arguments.subagent_type === seen.agentType);
  }
  if (calls.length !== 1) return null;
  memory?.linkSubagent(seen, calls[0].event_id);
  return calls[0].event_id;
}

/**
 * Point the events of a subagent that have no parent of their own to the
 * call that started it. A call's completion or failure is left alone: its
 * parent is its start, or none when the correlator could not tell which.
 *
 * @param events Events of one payload (changed in place).
 * @param callEventId The start event of the call that started the subagent,
 *   or null (then nothing changes).
 * @returns The same events.
 */
export function linkToCall(
  events: UnsealedEvent[],
  callEventId: string | null,
): UnsealedEvent[] {
  if (callEventId === null) return events;
  for (const ev of events) {
    if (ev.kind === "tool.call.completed" || ev.kind === "tool.call.failed") {
      continue;
    }
    ev.parent_event_id ??= callEventId;
  }
  return events;
}
