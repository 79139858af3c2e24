/**
 * Span shapes of the export after the current GenAI conventions: the
 * `invoke_agent` root of an episode (and its outcome), the `chat` span of
 * a model response, and the `execute_tool` span of a tool call (opened at
 * its start, closed by its completion or failure, or marked incomplete).
 *
 * @module
 */
import type { TraceEvent } from "../trace/event.ts";
import { canonicalJson } from "../trace/canonical_json.ts";
import {
  clip,
  derivedId,
  int,
  nanos,
  type OtlpSpan,
  str,
  strings,
} from "./otlp_types.ts";

/** One message in the `gen_ai.input.messages` / `output.messages` shape. */
export interface GenAiMessage {
  /** `user` or `assistant`. */
  role: string;
  /** Parts: text only, from harness. */
  parts: { type: "text"; content: string }[];
  /** On output messages, why the model stopped. */
  finish_reason?: string;
}

/** The agent's name: the episode's `agent`/`agent_name`, else the host. */
export function agentName(ev: TraceEvent): string {
  const p = ev.payload as Record<string, unknown>;
  for (const v of [p.agent_name, p.agent]) {
    if (typeof v === "string" && v) return v;
  }
  return ev.source.host;
}

/** Where a span goes: its trace, its parent, and the longest value kept. */
export interface SpanPlace {
  /** The episode's trace id. */
  traceId: string;
  /** The parent span (the episode's root, or the agent span of a call). */
  parentSpanId: string;
  /** Longest attribute value kept, in characters (longer ones are clipped). */
  max: number;
}

/** The root span of an episode, opened at its first event. */
export function rootSpan(
  ev: TraceEvent,
  ids: { captureId: string; traceId: string; rootId: string },
): OtlpSpan {
  const captureId = ids.captureId;
  const agent = agentName(ev);
  return {
    traceId: ids.traceId,
    spanId: ids.rootId,
    name: `invoke_agent ${agent}`,
    kind: 1,
    startTimeUnixNano: nanos(ev.timestamp),
    endTimeUnixNano: nanos(ev.timestamp),
    attributes: [
      str("gen_ai.operation.name", "invoke_agent"),
      str("gen_ai.agent.name", agent),
      str("gen_ai.conversation.id", ev.episode_id),
      str("harness.capture_id", captureId),
      str("harness.event_id", ev.event_id),
      str("harness.event_hash", ev.event_hash),
    ],
    status: { code: 0 },
  };
}

/** Finish reasons of a response (`finish`, `finish_reason(s)`, `stop_reason`). */
export function finishReasons(r: Record<string, unknown>): string[] {
  for (
    const v of [r.finish_reasons, r.finish, r.finish_reason, r.stop_reason]
  ) {
    if (typeof v === "string" && v) return [v];
    if (Array.isArray(v)) return v.filter((x) => typeof x === "string");
  }
  return [];
}

/** The provider the host reported for a response, or null. */
export function providerOf(ev: TraceEvent): string | null {
  const p = ev.payload as Record<string, unknown>;
  const r = (p.response ?? {}) as Record<string, unknown>;
  for (const v of [r.provider, p.provider]) {
    if (typeof v === "string" && v) return v;
  }
  return null;
}

/** The `chat` span of a `model.responded` event (a CLIENT span). */
export function chatSpan(ev: TraceEvent, place: SpanPlace): OtlpSpan {
  const { traceId, parentSpanId: rootId, max } = place;
  const r = ((ev.payload as Record<string, unknown>).response ?? {}) as {
    model?: string | null;
    text?: unknown;
    usage?: { input_tokens?: number | null; output_tokens?: number | null };
  } & Record<string, unknown>;
  const model = r.model ?? ev.source.model ?? "model";
  const provider = providerOf(ev);
  const reasons = finishReasons(r);
  const text = typeof r.text === "string" ? r.text : null;
  return {
    traceId,
    spanId: spanIdOf(ev.event_id),
    parentSpanId: rootId,
    name: `chat ${model}`,
    kind: 3,
    startTimeUnixNano: nanos(ev.timestamp),
    endTimeUnixNano: nanos(ev.timestamp),
    attributes: [
      str("gen_ai.operation.name", "chat"),
      str("gen_ai.request.model", model),
      ...(r.model ? [str("gen_ai.response.model", r.model)] : []),
      ...(provider ? [str("gen_ai.provider.name", provider)] : []),
      ...(reasons.length
        ? [strings("gen_ai.response.finish_reasons", reasons)]
        : []),
      ...(typeof r.usage?.input_tokens === "number"
        ? [int("gen_ai.usage.input_tokens", r.usage.input_tokens)]
        : []),
      ...(typeof r.usage?.output_tokens === "number"
        ? [int("gen_ai.usage.output_tokens", r.usage.output_tokens)]
        : []),
      ...(text !== null
        ? [str(
          "gen_ai.output.messages",
          JSON.stringify([{
            role: "assistant",
            parts: [{ type: "text", content: clip(text, max) }],
            ...(reasons[0] ? { finish_reason: reasons[0] } : {}),
          }]),
        )]
        : []),
      str("harness.event_id", ev.event_id),
      str("harness.event_hash", ev.event_hash),
      int("harness.sequence", ev.sequence),
    ],
    status: { code: 0 },
  };
}

/** The span id of the span an event opens. */
export function spanIdOf(eventId: string): string {
  return derivedId(eventId, 8);
}

/** The message of a recorded error. */
export function errorMessage(error: unknown): string {
  const m = (error as { message?: unknown } | null)?.message;
  return typeof m === "string" ? m : clip(error, 1024);
}

/** The type of a recorded error (`code`, `type`, `name`), else `error`. */
export function errorType(error: unknown): string {
  if (typeof error === "object" && error !== null) {
    const e = error as { type?: unknown; code?: unknown; name?: unknown };
    for (const v of [e.code, e.type, e.name]) {
      if (typeof v === "string" && v) return v;
    }
  }
  return "error";
}

/** The `execute_tool` span a `tool.call.started` event opens (not ended). */
export function toolSpan(ev: TraceEvent, place: SpanPlace): OtlpSpan {
  const { traceId, parentSpanId, max } = place;
  const p = ev.payload as Record<string, unknown>;
  const tool = p.tool as { host_name: string; logical_id: string | null };
  return {
    traceId,
    spanId: spanIdOf(ev.event_id),
    parentSpanId,
    name: `execute_tool ${tool.host_name}`,
    kind: 1,
    startTimeUnixNano: nanos(ev.timestamp),
    endTimeUnixNano: nanos(ev.timestamp),
    attributes: [
      str("gen_ai.operation.name", "execute_tool"),
      str("gen_ai.tool.name", tool.host_name),
      str(
        "gen_ai.tool.call.id",
        typeof p.host_call_id === "string" ? p.host_call_id : ev.event_id,
      ),
      str("gen_ai.tool.call.arguments", clip(p.arguments ?? {}, max)),
      str("harness.event_id", ev.event_id),
      str("harness.event_hash", ev.event_hash),
      int("harness.sequence", ev.sequence),
      ...(tool.logical_id
        ? [str("harness.tool.logical_id", tool.logical_id)]
        : []),
    ],
    status: { code: 0 },
  };
}

/**
 * End a tool span with its `tool.call.completed` (result, ok status) or
 * `tool.call.failed` event (`error.type`, the error, error status).
 */
export function endToolSpan(
  span: OtlpSpan,
  end: { ev: TraceEvent; max: number },
): void {
  const { ev, max } = end;
  const p = ev.payload as Record<string, unknown>;
  span.endTimeUnixNano = nanos(ev.timestamp);
  span.attributes.push(
    str("harness.completion.event_id", ev.event_id),
    str("harness.completion.event_hash", ev.event_hash),
    int("harness.completion.sequence", ev.sequence),
  );
  if (ev.kind === "tool.call.failed") {
    span.status = { code: 2, message: errorMessage(p.error) };
    span.attributes.push(
      str("error.type", errorType(p.error)),
      str("harness.error", clip(p.error, max)),
    );
  } else {
    span.attributes.push(
      str("gen_ai.tool.call.result", clip(p.result, max)),
    );
    span.status = { code: 1 };
  }
}

/** Set (or replace) a root span's outcome from an `episode.outcome` event. */
export function setOutcome(root: OtlpSpan, ev: TraceEvent): void {
  const p = ev.payload as Record<string, unknown>;
  root.attributes = root.attributes.filter((a) =>
    !a.key.startsWith("harness.outcome")
  );
  root.attributes.push({
    key: "harness.outcome.success",
    value: { boolValue: p.success === true },
  }, int("harness.outcome.sequence", ev.sequence));
  if (p.outcome !== undefined && p.outcome !== null) {
    root.attributes.push(str("harness.outcome", canonicalJson(p.outcome)));
  }
  root.status = p.success === false
    ? { code: 2, message: "failed" }
    : { code: 0 };
}

/** Mark a span finished early (a call with no completion). */
export function incomplete(span: OtlpSpan): OtlpSpan {
  span.attributes.push({
    key: "harness.incomplete",
    value: { boolValue: true },
  });
  return span;
}
