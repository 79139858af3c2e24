/**
 * Canonical events for calls forwarded by the proxy.
 *
 * @module
 */
import type { UnsealedEvent } from "../trace/event.ts";
import type { EventContext } from "../trace/make_event.ts";
import {
  toolCallCompleted,
  toolCallFailed,
  toolCallStarted,
} from "../trace/tool_events.ts";
import type { EventSink } from "../tool_gateway/event_sink.ts";
import type { ProxiedTool } from "./proxied_tool.ts";

/** Source of proxy events. */
export const PROXY_SOURCE = {
  host: "proxy",
  adapter: "mcp-stdio-proxy",
  model: null,
} as const;

/** A forwarded call: its tool, its arguments and the client's request id. */
export interface ProxiedCall {
  /** The tool. */
  tool: ProxiedTool;
  /** Arguments. */
  args: Record<string, unknown>;
  /** The client's request id, when known. */
  hostCallId?: string | null;
}

/** How a forwarded call ended, for {@linkcode proxiedFinish}. */
export interface ProxiedOutcome extends ProxiedCall {
  /** The started event. */
  started: UnsealedEvent;
  /** The upstream's result (a CallToolResult), when it answered. */
  result?: unknown;
  /** The error, when the call failed without a result. */
  error?: unknown;
  /** How long it took, in ms. */
  durationMs?: number;
}

/** Options of {@linkcode recordProxiedCall}. */
export interface RecordProxiedCallOptions {
  /** The tool. */
  tool: ProxiedTool;
  /** Arguments. */
  args: Record<string, unknown>;
  /** Capture id. */
  captureId: string;
  /**
   * Episode id.
   * @default "ep_proxy"
   */
  episodeId?: string;
  /** The upstream's result (a CallToolResult), when it answered. */
  result?: unknown;
  /** The error, when the call failed without a result. */
  error?: unknown;
  /** The client's request id, when known. */
  hostCallId?: string | null;
}

/** Default episode of proxied calls. */
export const DEFAULT_PROXY_EPISODE = "ep_proxy";

/**
 * The `tool.call.started` of a forwarded call.
 *
 * @param ctx Event context.
 * @param call The tool, its arguments and the client's request id.
 * @returns The event.
 */
export function proxiedStart(
  ctx: EventContext,
  call: ProxiedCall,
): UnsealedEvent {
  const { tool, args, hostCallId } = call;
  return toolCallStarted(ctx, {
    tool: { host_name: tool.namespaced, logical_id: tool.logicalId },
    arguments: args,
    server: tool.server,
    upstream_tool: tool.name,
    ...(hostCallId ? { host_call_id: hostCallId } : {}),
  });
}

/**
 * The completion of a forwarded call: `tool.call.failed` when there is an
 * error or the result has `isError`, else `tool.call.completed`. A
 * result's `structuredContent` is also kept as `structured_result`.
 *
 * @param ctx Event context.
 * @param outcome The call, its started event, its result or error, timing.
 * @returns The event.
 */
export function proxiedFinish(
  ctx: EventContext,
  outcome: ProxiedOutcome,
): UnsealedEvent {
  const { tool, args, started } = outcome;
  const common = {
    tool: { host_name: tool.namespaced, logical_id: tool.logicalId },
    arguments: args,
    ...(outcome.hostCallId ? { host_call_id: outcome.hostCallId } : {}),
    ...(outcome.durationMs !== undefined
      ? { duration_ms: outcome.durationMs }
      : {}),
  };
  const opts = { parentEventId: started.event_id };
  const r = outcome.result as
    | { isError?: boolean; structuredContent?: unknown }
    | undefined;
  if (outcome.error !== undefined || r?.isError === true) {
    return toolCallFailed(ctx, {
      ...common,
      error: outcome.error !== undefined
        ? outcome.error
        : { is_error_result: true },
      ...(r !== undefined ? { result: r } : {}),
    }, opts);
  }
  return toolCallCompleted(ctx, {
    ...common,
    result: r ?? null,
    ...(r?.structuredContent !== undefined
      ? { structured_result: r.structuredContent }
      : {}),
  }, opts);
}

/**
 * Record one forwarded call after the fact: its start and its completion or
 * failure, emitted to the sink in order.
 *
 * @param sink Where events go.
 * @param options Tool, arguments, capture, episode, result or error, client call id.
 * @returns The two events.
 */
export function recordProxiedCall(
  sink: EventSink,
  options: RecordProxiedCallOptions,
): UnsealedEvent[] {
  const { tool, args } = options;
  const ctx: EventContext = {
    captureId: options.captureId,
    episodeId: options.episodeId ?? DEFAULT_PROXY_EPISODE,
    source: { ...PROXY_SOURCE },
  };
  const start = proxiedStart(ctx, {
    tool,
    args,
    hostCallId: options.hostCallId,
  });
  const end = proxiedFinish(ctx, {
    tool,
    args,
    started: start,
    result: options.result,
    error: options.error,
    hostCallId: options.hostCallId,
  });
  sink.emit(start);
  sink.emit(end);
  return [start, end];
}
