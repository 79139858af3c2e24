/**
 * Constructors of tool events: a call started, completed or failed (with the
 * tool's identity, {@linkcode ToolRef}), and the toolset exposed to a model.
 *
 * @module
 */
import type { Payload, UnsealedEvent } from "./event.ts";
import {
  type EventContext,
  type EventOptions,
  makeEvent,
} from "./make_event.ts";

/** Identity of a tool in tool-call payloads. */
export interface ToolRef {
  /** Name as the host or caller knows it. */
  host_name: string;
  /** Logical id shared across hosts, or null when unmapped. */
  logical_id: string | null;
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
  return makeEvent(ctx, {
    kind: "tool.call.started",
    payload,
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
  return makeEvent(ctx, {
    kind: "tool.call.completed",
    payload,
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
  return makeEvent(ctx, {
    kind: "tool.call.failed",
    payload,
    actor: "tool",
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
  return makeEvent(ctx, { kind: "toolset.exposed", payload, ...options });
}
