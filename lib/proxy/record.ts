/**
 * Canonical events for calls forwarded by the proxy.
 *
 * @module
 */
import type { UnsealedEvent } from "../trace/event.ts";
import type { EventContext } from "../trace/events.ts";
import {
  toolCallCompleted,
  toolCallFailed,
  toolCallStarted,
} from "../trace/tool_events.ts";
import type { EventSink } from "../gateway/event_sink.ts";
import type { ProxiedTool } from "./proxied_tool.ts";

/** Source of proxy events. */
export const PROXY_SOURCE = {
  host: "proxy",
  adapter: "mcp-stdio-proxy",
  model: null,
} as const;

/** Options of {@linkcode recordProxiedCall}. */
export interface RecordProxiedCallOptions {
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
 * @param tool The tool.
 * @param args Arguments.
 * @param hostCallId Client request id.
 * @returns The event.
 */
export function proxiedStart(
  ctx: EventContext,
  tool: ProxiedTool,
  args: Record<string, unknown>,
  hostCallId?: string | null,
): UnsealedEvent {
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
 * @param tool The tool.
 * @param args Arguments.
 * @param started The started event.
 * @param outcome Result or error, timing.
 * @returns The event.
 */
export function proxiedFinish(
  ctx: EventContext,
  tool: ProxiedTool,
  args: Record<string, unknown>,
  started: UnsealedEvent,
  outcome: {
    result?: unknown;
    error?: unknown;
    durationMs?: number;
    hostCallId?: string | null;
  },
): UnsealedEvent {
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
 * @param tool The tool.
 * @param args Arguments.
 * @param options Capture, episode, result or error, client call id.
 * @returns The two events.
 */
export function recordProxiedCall(
  sink: EventSink,
  tool: ProxiedTool,
  args: Record<string, unknown>,
  options: RecordProxiedCallOptions,
): UnsealedEvent[] {
  const ctx: EventContext = {
    captureId: options.captureId,
    episodeId: options.episodeId ?? DEFAULT_PROXY_EPISODE,
    source: { ...PROXY_SOURCE },
  };
  const start = proxiedStart(ctx, tool, args, options.hostCallId);
  const end = proxiedFinish(ctx, tool, args, start, {
    result: options.result,
    error: options.error,
    hostCallId: options.hostCallId,
  });
  sink.emit(start);
  sink.emit(end);
  return [start, end];
}
