/**
 * The tool-call events of host_c's envelope: `tool.execute.before` and
 * `tool.execute.after`.
 *
 * @module
 */
import type { UnsealedEvent } from "../trace/event.ts";
import type { EventContext } from "../trace/make_event.ts";
import {
  toolCallCompleted,
  toolCallFailed,
  toolCallStarted,
  type ToolRef,
} from "../trace/tool_events.ts";
import type { ToolCallCorrelator } from "./correlator.ts";
import { mcpLogicalId, parseJsonText } from "./common.ts";
import type { HostCEnvelope } from "./_opencode_envelope.ts";

const HOST = "host_c";

function toolRef(env: HostCEnvelope): ToolRef {
  return {
    host_name: env.tool!,
    logical_id: env.mcp_server && env.mcp_tool
      ? mcpLogicalId(env.mcp_server, env.mcp_tool)
      : null,
  };
}

/** One tool hook's envelope with what its event needs. */
export interface ToolHook {
  /** The envelope. */
  env: HostCEnvelope;
  /** Event context. */
  ctx: EventContext;
  /** The ingest process's correlator, if any. */
  correlator: ToolCallCorrelator | null;
}

/** `tool.execute.before`: the call starts (and the correlator learns of it). */
export function toolStarted(h: ToolHook): UnsealedEvent {
  const { env, ctx, correlator } = h;
  const session = env.session_id;
  const args = env.args ?? {};
  const ev = toolCallStarted(ctx, {
    tool: toolRef(env),
    arguments: args,
    host_call_id: env.call_id!,
  });
  correlator?.start({
    host: HOST,
    session,
    tool: env.tool!,
    input: args,
    callId: env.call_id,
  }, ev.event_id);
  return ev;
}

/** `tool.execute.after`: the call's end (a refusal, an error or a bash exit fails it). */
export function toolEnded(h: ToolHook): UnsealedEvent {
  const { env, ctx, correlator } = h;
  const session = env.session_id;
  const args = env.args ?? {};
  const link = correlator?.finish({
    host: HOST,
    session,
    tool: env.tool!,
    input: args,
    callId: env.call_id,
  });
  const common = {
    tool: toolRef(env),
    arguments: args,
    host_call_id: env.call_id!,
    ...(link ? { correlation: link.correlation } : {}),
  };
  const opts = { parentEventId: link?.parentEventId ?? null };
  if (env.error !== undefined && env.error !== null) {
    const e = env.error;
    return toolCallFailed(ctx, {
      ...common,
      error: {
        ...(typeof e === "object" && !Array.isArray(e)
          ? e
          : { message: String(e) }),
        outcome: env.refused ? "refused" : "failed",
      },
    }, opts);
  }
  const result = env.result ?? null;
  const exit = (result as { metadata?: { exit?: unknown } } | null)
    ?.metadata?.exit;
  if (env.tool === "bash" && typeof exit === "number" && exit !== 0) {
    return toolCallFailed(ctx, {
      ...common,
      result,
      error: {
        type: "exit_code",
        exit_code: exit,
        outcome: "failed",
        message: String((result as { output?: unknown }).output ?? ""),
      },
    }, opts);
  }
  let structured: unknown;
  const r = result as { structuredContent?: unknown; content?: unknown };
  if (r && typeof r === "object" && "structuredContent" in r) {
    structured = r.structuredContent;
  } else if (r && Array.isArray(r.content) && r.content.length === 1) {
    structured = parseJsonText((r.content[0] as { text?: unknown })?.text);
  }
  return toolCallCompleted(ctx, {
    ...common,
    result,
    ...(structured !== undefined ? { structured_result: structured } : {}),
  }, opts);
}
