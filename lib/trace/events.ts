/**
 * Constructors for every canonical event kind. They build unsealed events;
 * a sink assigns `sequence` and seals the hash chain.
 *
 * @module
 */
import type {
  EventKind,
  EventSource,
  Payload,
  UnsealedEvent,
} from "./event.ts";
import { SCHEMA_VERSION } from "./event.ts";

/** Where and by whom an event is made. */
export interface EventContext {
  /** Owning capture. */
  captureId: string;
  /** Owning episode. */
  episodeId: string;
  /** Producer of the event. */
  source: EventSource;
  /**
   * Clock, for reproducible tests.
   * @default () => new Date()
   */
  now?: () => Date;
  /**
   * Id generator, for reproducible tests.
   * @default () => `evt_${crypto.randomUUID()}`
   */
  newId?: () => string;
}

/** Options shared by every constructor. */
export interface EventOptions {
  /**
   * Actor of the event; each constructor has a sensible default.
   */
  actor?: string;
  /**
   * Started event this one completes.
   * @default null
   */
  parentEventId?: string | null;
  /** Explicit timestamp (ISO 8601 UTC with milliseconds); defaults to the context clock. */
  timestamp?: string;
}

/** Identity of a tool in tool-call payloads. */
export interface ToolRef {
  /** Name as the host or caller knows it. */
  host_name: string;
  /** Logical id shared across hosts, or null when unmapped. */
  logical_id: string | null;
}

/**
 * Build an unsealed event of any kind.
 *
 * @param ctx Capture, episode, source, clock and ids.
 * @param kind Event kind.
 * @param payload Kind-specific body.
 * @param options Actor, parent and timestamp.
 * @returns The unsealed event.
 *
 * @example
 * ```ts
 * import { makeEvent } from "./events.ts";
 * const ev = makeEvent(
 *   { captureId: "cap_1", episodeId: "ep_1", source: { host: "harness", adapter: "demo", model: null } },
 *   "annotation",
 *   { label: "hello" },
 * );
 * import { strictEqual } from "node:assert/strict";
 * strictEqual(ev.kind, "annotation");
 * ```
 */
export function makeEvent(
  ctx: EventContext,
  kind: EventKind | string,
  payload: Payload,
  options: EventOptions = {},
): UnsealedEvent {
  const now = ctx.now ?? (() => new Date());
  const newId = ctx.newId ?? (() => `evt_${crypto.randomUUID()}`);
  return {
    schema_version: SCHEMA_VERSION,
    event_id: newId(),
    capture_id: ctx.captureId,
    episode_id: ctx.episodeId,
    timestamp: options.timestamp ?? now().toISOString(),
    source: { ...ctx.source },
    actor: options.actor ?? "harness",
    kind,
    parent_event_id: options.parentEventId ?? null,
    payload,
  };
}

/** Payload of `episode.started`. */
export interface EpisodeStartedPayload extends Payload {
  /** Why or how the episode started (host `source`, e.g. `startup`, `resume`). */
  reason?: string;
  /** Free task description or input. */
  task?: unknown;
}

/**
 * `episode.started`.
 * @param ctx Event context.
 * @param payload Start details.
 * @param options Actor (default `host`), parent, timestamp.
 * @returns The unsealed event.
 */
export function episodeStarted(
  ctx: EventContext,
  payload: EpisodeStartedPayload = {},
  options: EventOptions = {},
): UnsealedEvent {
  return makeEvent(ctx, "episode.started", payload, {
    actor: "host",
    ...options,
  });
}

/** Payload of `episode.finished`. */
export interface EpisodeFinishedPayload extends Payload {
  /** How it ended: host `reason`, `completed`, `stopped`, … */
  reason?: string;
  /** Calls started but never completed in the episode, when the producer knows them. */
  incomplete_calls?: string[];
}

/**
 * `episode.finished`.
 * @param ctx Event context.
 * @param payload End details.
 * @param options Actor (default `host`), parent, timestamp.
 * @returns The unsealed event.
 */
export function episodeFinished(
  ctx: EventContext,
  payload: EpisodeFinishedPayload = {},
  options: EventOptions = {},
): UnsealedEvent {
  return makeEvent(ctx, "episode.finished", payload, {
    actor: "host",
    ...options,
  });
}

/** Payload of `node.enter` / `node.exit`. */
export interface NodePayload extends Payload {
  /** IR node id. */
  node_id: string;
  /** IR node kind. */
  node_kind: string;
  /** On exit: `success`, `failure`, `fallback`, … */
  status?: string;
}

/**
 * `node.enter`.
 * @param ctx Event context.
 * @param payload Node identity.
 * @param options Actor (default `runtime`), parent, timestamp.
 * @returns The unsealed event.
 */
export function nodeEnter(
  ctx: EventContext,
  payload: NodePayload,
  options: EventOptions = {},
): UnsealedEvent {
  return makeEvent(ctx, "node.enter", payload, {
    actor: "runtime",
    ...options,
  });
}

/**
 * `node.exit`.
 * @param ctx Event context.
 * @param payload Node identity and status.
 * @param options Actor (default `runtime`), parent (the enter event), timestamp.
 * @returns The unsealed event.
 */
export function nodeExit(
  ctx: EventContext,
  payload: NodePayload,
  options: EventOptions = {},
): UnsealedEvent {
  return makeEvent(ctx, "node.exit", payload, {
    actor: "runtime",
    ...options,
  });
}

/** Payload of `tool.call.started`. */
export interface ToolCallStartedPayload extends Payload {
  /** Tool identity. */
  tool: ToolRef;
  /** Call arguments. */
  arguments: Record<string, unknown>;
  /** The host's own call id, when it gives one. */
  host_call_id?: string;
  /** JSON schema of the tool's input, when known. */
  input_schema?: unknown;
}

/**
 * `tool.call.started`.
 * @param ctx Event context.
 * @param payload Tool, arguments and host call id.
 * @param options Actor (default `model`), parent, timestamp.
 * @returns The unsealed event.
 */
export function toolCallStarted(
  ctx: EventContext,
  payload: ToolCallStartedPayload,
  options: EventOptions = {},
): UnsealedEvent {
  return makeEvent(ctx, "tool.call.started", payload, {
    actor: "model",
    ...options,
  });
}

/** Payload of `tool.call.completed`. */
export interface ToolCallCompletedPayload extends Payload {
  /** Tool identity. */
  tool: ToolRef;
  /** Call arguments (repeated so a completion stands alone). */
  arguments: Record<string, unknown>;
  /** What the tool returned. */
  result: unknown;
  /** The host's own call id, when it gives one. */
  host_call_id?: string;
  /** Wall time of the call. */
  duration_ms?: number;
}

/**
 * `tool.call.completed`. Set `parentEventId` to the started event when known.
 * @param ctx Event context.
 * @param payload Tool, arguments, result.
 * @param options Actor (default `tool`), parent, timestamp.
 * @returns The unsealed event.
 */
export function toolCallCompleted(
  ctx: EventContext,
  payload: ToolCallCompletedPayload,
  options: EventOptions = {},
): UnsealedEvent {
  return makeEvent(ctx, "tool.call.completed", payload, {
    actor: "tool",
    ...options,
  });
}

/** Payload of `tool.call.failed`. */
export interface ToolCallFailedPayload extends Payload {
  /** Tool identity. */
  tool: ToolRef;
  /** Call arguments. */
  arguments: Record<string, unknown>;
  /** The error, as structured as the producer has it. */
  error: unknown;
  /** The host's own call id, when it gives one. */
  host_call_id?: string;
  /** Wall time of the call. */
  duration_ms?: number;
}

/**
 * `tool.call.failed`. Set `parentEventId` to the started event when known.
 * @param ctx Event context.
 * @param payload Tool, arguments, error.
 * @param options Actor (default `tool`), parent, timestamp.
 * @returns The unsealed event.
 */
export function toolCallFailed(
  ctx: EventContext,
  payload: ToolCallFailedPayload,
  options: EventOptions = {},
): UnsealedEvent {
  return makeEvent(ctx, "tool.call.failed", payload, {
    actor: "tool",
    ...options,
  });
}

/** Payload of `model.requested`. */
export interface ModelRequestedPayload extends Payload {
  /** Node or component asking. */
  node_id?: string;
  /** What was sent (inputs, messages or a digest of them). */
  request: unknown;
}

/**
 * `model.requested`.
 * @param ctx Event context.
 * @param payload The request.
 * @param options Actor (default `runtime`), parent, timestamp.
 * @returns The unsealed event.
 */
export function modelRequested(
  ctx: EventContext,
  payload: ModelRequestedPayload,
  options: EventOptions = {},
): UnsealedEvent {
  return makeEvent(ctx, "model.requested", payload, {
    actor: "runtime",
    ...options,
  });
}

/** Payload of `model.responded`. */
export interface ModelRespondedPayload extends Payload {
  /** Node or component that asked. */
  node_id?: string;
  /** What came back. */
  response: unknown;
}

/**
 * `model.responded`. Set `parentEventId` to the request.
 * @param ctx Event context.
 * @param payload The response.
 * @param options Actor (default `model`), parent, timestamp.
 * @returns The unsealed event.
 */
export function modelResponded(
  ctx: EventContext,
  payload: ModelRespondedPayload,
  options: EventOptions = {},
): UnsealedEvent {
  return makeEvent(ctx, "model.responded", payload, {
    actor: "model",
    ...options,
  });
}

/** Payload of `blackboard.write`. */
export interface BlackboardWritePayload extends Payload {
  /** Blackboard key (a store name). */
  key: string;
  /** Value written. */
  value: unknown;
}

/**
 * `blackboard.write`.
 * @param ctx Event context.
 * @param payload Key and value.
 * @param options Actor (default `runtime`), parent, timestamp.
 * @returns The unsealed event.
 */
export function blackboardWrite(
  ctx: EventContext,
  payload: BlackboardWritePayload,
  options: EventOptions = {},
): UnsealedEvent {
  return makeEvent(ctx, "blackboard.write", payload, {
    actor: "runtime",
    ...options,
  });
}

/** One tool in a `toolset.exposed` payload. */
export interface ExposedTool {
  /** Name the model sees. */
  name: string;
  /** Logical id, or null. */
  logical_id: string | null;
  /** Human description. */
  description?: string;
  /** JSON schema of the input. */
  input_schema?: unknown;
  /** JSON schema of the output, when declared. */
  output_schema?: unknown;
  /**
   * What the tool declares about its effects, as MCP tool annotations (the
   * upstream's `annotations` from `tools/list`, or an import's declared tool
   * types). MCP's defaults when a hint is absent: not read-only, destructive.
   */
  annotations?: {
    /** A human title. */
    title?: string;
    /** The tool does not change its environment. */
    readOnlyHint?: boolean;
    /** It may delete or overwrite (only meaningful when not read-only). */
    destructiveHint?: boolean;
    /** Calling it again with the same arguments has no further effect. */
    idempotentHint?: boolean;
    /** It reaches an open world of outside entities. */
    openWorldHint?: boolean;
  };
}

/** Payload of `toolset.exposed`. */
export interface ToolsetExposedPayload extends Payload {
  /** The tools, in exposure order. */
  tools: ExposedTool[];
  /** Where they come from (server name, node id). */
  origin?: string;
}

/**
 * `toolset.exposed`.
 * @param ctx Event context.
 * @param payload The toolset.
 * @param options Actor (default `harness`), parent, timestamp.
 * @returns The unsealed event.
 */
export function toolsetExposed(
  ctx: EventContext,
  payload: ToolsetExposedPayload,
  options: EventOptions = {},
): UnsealedEvent {
  return makeEvent(ctx, "toolset.exposed", payload, options);
}

/** Payload of `annotation`. */
export interface AnnotationPayload extends Payload {
  /** What the annotation says, as a dotted type: `session.error`, `episode.outcome`, … */
  type: string;
}

/**
 * `annotation`: a fact about the run that is not an action.
 * @param ctx Event context.
 * @param payload The annotation.
 * @param options Actor (default `harness`), parent, timestamp.
 * @returns The unsealed event.
 */
export function annotation(
  ctx: EventContext,
  payload: AnnotationPayload,
  options: EventOptions = {},
): UnsealedEvent {
  return makeEvent(ctx, "annotation", payload, options);
}

/** Payload of `message`. */
export interface MessagePayload extends Payload {
  /** `user`, `assistant` or `system`. */
  role: string;
  /** The text. */
  text: string;
}

/**
 * `message`: a user or assistant message.
 * @param ctx Event context.
 * @param payload Role and text.
 * @param options Actor (default: the role when it is `user`, else `model`), parent, timestamp.
 * @returns The unsealed event.
 */
export function message(
  ctx: EventContext,
  payload: MessagePayload,
  options: EventOptions = {},
): UnsealedEvent {
  return makeEvent(ctx, "message", payload, {
    actor: payload.role === "user" ? "user" : "model",
    ...options,
  });
}
