/**
 * One tool call made by a runtime, traced when a sink is attached: a
 * `tool.call.started`, then `tool.call.completed` with the result or
 * `tool.call.failed` with the error, linked to the start. A tool that
 * throws is an answer (`ok: false` with the message); arguments that
 * cannot be bound to the tool (`ToolBindingError`: a capabilities module
 * whose tool is `(a) => …`) are a programming error, recorded and thrown,
 * never shown as a failed call.
 *
 * @module
 */
import type { EventSink } from "../tool_gateway/event_sink.ts";
import type { EventContext } from "../trace/make_event.ts";
import {
  toolCallCompleted,
  toolCallFailed,
  toolCallStarted,
} from "../trace/tool_events.ts";
import { callWithArgs, type NamedCall } from "./bind_args.ts";
import { ToolBindingError } from "../tool_gateway/parameters.ts";

/** What a traced call gave back. */
export interface TracedCallResult {
  /** Whether the tool succeeded. */
  ok: boolean;
  /** Its result, or the error message. */
  result: unknown;
}

/** Where a traced call is recorded (null: not traced). */
export interface CallTrace {
  /** The sink. */
  sink: EventSink;
  /** Capture, episode and source of the events. */
  ctx: EventContext;
}

/**
 * Call a tool with named arguments, traced when `trace` is given.
 *
 * @param call The tool, its name and the arguments by name.
 * @param trace Sink and context, or null.
 * @returns `{ok, result}`; a thrown error becomes `{ok: false, result: message}`.
 * @throws {ToolBindingError} The arguments cannot be bound to the tool (after the failed call is recorded).
 */
export async function tracedCall(
  call: NamedCall,
  trace: CallTrace | null,
): Promise<TracedCallResult> {
  const { name: tool, args } = call;
  const ref = { host_name: tool, logical_id: tool };
  const started = trace
    ? toolCallStarted(trace.ctx, { tool: ref, arguments: args })
    : null;
  if (started) trace!.sink.emit(started);
  try {
    const result = await callWithArgs(call);
    if (started) {
      trace!.sink.emit(
        toolCallCompleted(trace!.ctx, { tool: ref, arguments: args, result }, {
          parentEventId: started.event_id,
        }),
      );
    }
    return { ok: true, result };
  } catch (err) {
    const error = { message: (err as Error)?.message ?? String(err) };
    if (started) {
      trace!.sink.emit(
        toolCallFailed(trace!.ctx, { tool: ref, arguments: args, error }, {
          parentEventId: started.event_id,
        }),
      );
    }
    if (err instanceof ToolBindingError) throw err;
    return { ok: false, result: error.message };
  }
}
