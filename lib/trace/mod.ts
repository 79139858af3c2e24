/**
 * Canonical `harness.trace.v1` events, for producers: the event envelope,
 * the context and options every constructor takes, the constructors of an
 * episode's events (start, finish, messages, annotations) and of tool calls,
 * the hosts by every name they go by (`HOST_TABLE`), and canonical JSON
 * (the form of a spool line, which its hash covers).
 *
 * Recording the events, reading them back and checking their hash chain is
 * `./store`. The constructors of the other kinds (model, toolset, runtime)
 * and of any kind, the chain sealer, ids and validation are mechanism the
 * harness uses itself, from their files under `lib/trace/`.
 *
 * @module
 */
export type {
  EventSource,
  Payload,
  TraceEvent,
  UnsealedEvent,
} from "./event.ts";
export type { EventContext, EventOptions } from "./make_event.ts";
export { type Host, HOST_TABLE, hostByName, hostLabel } from "./hosts.ts";
export {
  annotation,
  type AnnotationPayload,
  episodeFinished,
  type EpisodeFinishedPayload,
  episodeStarted,
  type EpisodeStartedPayload,
  message,
  type MessagePayload,
} from "./episode_events.ts";
export {
  type ExposedTool,
  toolCallCompleted,
  type ToolCallCompletedPayload,
  toolCallFailed,
  type ToolCallFailedPayload,
  toolCallStarted,
  type ToolCallStartedPayload,
  type ToolRef,
} from "./tool_events.ts";
export { canonicalJson } from "./canonical_json.ts";
