/**
 * The small capture `demo` writes: one episode of an agent looking up an
 * order and refunding it, recorded as canonical events.
 *
 * @module
 */
import type { TraceSink } from "../store/sink.ts";
import type { EventContext } from "../trace/events.ts";
import {
  annotation,
  episodeFinished,
  episodeStarted,
  message,
  toolCallCompleted,
  toolCallStarted,
} from "../trace/events.ts";

/**
 * Record the demo episode into a sink.
 *
 * @param sink The capture's sink.
 * @param ctx Event context (capture, episode, source, clock).
 * @returns Number of events written.
 */
export function writeDemoEpisode(sink: TraceSink, ctx: EventContext): number {
  let n = 0;
  const emit = (ev: Parameters<TraceSink["emit"]>[0]) => {
    n++;
    return sink.emit(ev);
  };
  emit(annotation({ ...ctx, episodeId: "_capture" }, {
    type: "capture.started",
    label: "demo",
  }));
  emit(episodeStarted(ctx, { reason: "demo" }));
  emit(message(ctx, {
    role: "user",
    text: "Please refund my last order, I'm ana@example.com",
  }));
  const calls: [string, Record<string, unknown>, unknown][] = [
    ["find_user", { email: "ana@example.com" }, { user_id: "U-1042" }],
    ["list_orders", { user_id: "U-1042" }, {
      orders: [{ order_id: "O-7781", status: "delivered", total: 42.5 }],
    }],
    ["refund", { order_id: "O-7781", amount: 42.5 }, {
      refund_id: "R-5520",
      status: "issued",
    }],
  ];
  for (const [name, args, result] of calls) {
    const tool = { host_name: name, logical_id: name };
    const started = emit(toolCallStarted(ctx, { tool, arguments: args }));
    emit(toolCallCompleted(ctx, { tool, arguments: args, result }, {
      parentEventId: started.event_id,
    }));
  }
  emit(message(ctx, { role: "assistant", text: "Refund R-5520 issued." }));
  emit(episodeFinished(ctx, { reason: "completed" }));
  return n;
}
