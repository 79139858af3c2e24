/**
 * The canonical trace event envelope (`harness.trace.v1`) and its parts.
 *
 * @module
 */

/** Value of `schema_version` on every event. */
export const SCHEMA_VERSION = "harness.trace.v1";

/** Who or what produced an event: the host, the adapter that mapped it, the model if known. */
export interface EventSource {
  /** Host name: `host_a`, `host_b`, `host_c`, `gateway`, `proxy`, `runtime`, `harness`, … */
  host: string;
  /** Adapter or component that built the event. */
  adapter: string;
  /** Model identifier when known, else null. */
  model: string | null;
}

/**
 * Every kind the harness emits. Section 6 of the contract, plus `message`
 * (user and assistant messages, the evidence for fidelity F1).
 */
export const EVENT_KINDS = [
  "episode.started",
  "episode.finished",
  "node.enter",
  "node.exit",
  "tool.call.started",
  "tool.call.completed",
  "tool.call.failed",
  "model.requested",
  "model.responded",
  "blackboard.write",
  "toolset.exposed",
  "annotation",
  "message",
] as const;

/** A known event kind. The envelope accepts any dotted lowercase kind; these are the ones with constructors. */
export type EventKind = typeof EVENT_KINDS[number];

/**
 * Actor values: `model` (the agent's model chose this), `user`, `tool` (a
 * tool or environment answered), `runtime` (a compiled behavior decided),
 * `host` (the agent host's own lifecycle), `harness` (the harness itself).
 */
export const ACTORS = [
  "model",
  "user",
  "tool",
  "runtime",
  "host",
  "harness",
] as const;

/** One of {@linkcode ACTORS}. */
export type Actor = typeof ACTORS[number];

/** A JSON object payload. */
export type Payload = Record<string, unknown>;

/** A fully sealed canonical trace event, exactly as stored in a spool line. */
export interface TraceEvent {
  /** Always `harness.trace.v1`. */
  schema_version: string;
  /** Unique id of the event. */
  event_id: string;
  /** Owning capture. */
  capture_id: string;
  /** Owning episode (for host sessions, the session id). */
  episode_id: string;
  /** Position in the capture, from 1, assigned by the sink. */
  sequence: number;
  /** ISO 8601 UTC with milliseconds. */
  timestamp: string;
  /** Producer of the event. */
  source: EventSource;
  /** Who acted. */
  actor: string;
  /** Event kind (section 6). */
  kind: string;
  /**
   * Started event this one completes, or null; a subagent's other events
   * point to the start of the call that started the subagent.
   */
  parent_event_id: string | null;
  /** Kind-specific body. */
  payload: Payload;
  /** `event_hash` of the previous event in the capture (genesis for the first). */
  prev_event_hash: string;
  /** `sha256:<hex>` over the canonical event without this field. */
  event_hash: string;
}

/** An event before a sink placed it in a chain: no sequence and no hashes yet. */
export type UnsealedEvent = Omit<
  TraceEvent,
  "sequence" | "prev_event_hash" | "event_hash"
>;
