/**
 * Import, span by span: the events one OTLP span stands for. A tool span
 * becomes `tool.call.started` and `tool.call.completed` (or `failed`), a
 * chat/LLM span `model.responded` with token usage, and the user and
 * assistant texts on any span `message`s. Ids are derived from the trace,
 * span and role; the episode around them is `import.ts`'s.
 *
 * @module
 */
import type { UnsealedEvent } from "../trace/event.ts";
import { sha256Hex } from "../trace/hash.ts";
import { message } from "../trace/episode_events.ts";
import type { EventContext } from "../trace/make_event.ts";
import { modelResponded } from "../trace/model_events.ts";
import {
  toolCallCompleted,
  toolCallFailed,
  toolCallStarted,
} from "../trace/tool_events.ts";
import type { OtlpSpan } from "./otlp_types.ts";
import {
  type AttrMap,
  first,
  iso,
  parseValue,
  spanMessages,
} from "./_attrs.ts";

/** A valid span, where it was in the request and its attributes. */
export interface Found {
  /** The span (ids lower-cased). */
  span: OtlpSpan;
  /** Where in the request (`resourceSpans[0].scopeSpans[0].spans[3]`). */
  where: string;
  /** Its attributes. */
  m: AttrMap;
}

/** The episode a span's events go to, where they go, and how they are made. */
export interface SpanOut {
  /** The capture id (part of every event id). */
  cap: string;
  /** The episode. */
  episodeId: string;
  /** The trace. */
  traceId: string;
  /** The kind of each span of the trace, by span id. */
  kinds: Map<string, string | null>;
  /** The episode's event context with a fixed id (and model). */
  ctx: (id: string, model?: string | null) => EventContext;
  /** The order of an event: harness sequence, else microseconds. */
  at: (seq: unknown, nanos: string | undefined) => number;
  /** Adds an event at an order. */
  push: (order: number, ev: UnsealedEvent) => void;
}

/** An event id derived from the capture and `parts`. */
export function eventId(captureId: string, ...parts: string[]): string {
  return `evt_otlp_${sha256Hex([captureId, ...parts].join("|")).slice(0, 32)}`;
}

/**
 * A span's user and assistant texts as `message`s: one event per distinct
 * (role, text, occurrence) on the span, so the same message seen on two
 * spans (a chat's history) gets one id.
 */
export function messageItems(s: Found, out: SpanOut): void {
  const { cap, episodeId, ctx, at, push } = out;
  const seen = new Map<string, number>();
  for (const msg of spanMessages(s.span, s.m)) {
    const key = `${msg.role}|${sha256Hex(msg.text)}`;
    const k = seen.get(key) ?? 0;
    seen.set(key, k + 1);
    push(
      at(msg.sequence, msg.nanos),
      message(ctx(eventId(cap, episodeId, "message", key, String(k))), {
        role: msg.role,
        text: msg.text,
      }, { timestamp: iso(msg.nanos) }),
    );
  }
}

/** A chat/LLM span's `model.responded`, with model, provider and usage. */
export function chatItem(s: Found, out: SpanOut): void {
  const { cap, traceId, ctx, at, push } = out;
  const model = first(
    s.m,
    "gen_ai.response.model",
    "gen_ai.request.model",
    "llm.model_name",
  );
  const input = first(
    s.m,
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.prompt_tokens",
    "llm.token_count.prompt",
  );
  const output = first(
    s.m,
    "gen_ai.usage.output_tokens",
    "gen_ai.usage.completion_tokens",
    "llm.token_count.completion",
  );
  const provider = first(s.m, "gen_ai.provider.name", "gen_ai.system");
  const reasons = parseValue(first(s.m, "gen_ai.response.finish_reasons"));
  const name = typeof model === "string" ? model : null;
  push(
    at(s.m.get("harness.sequence"), s.span.endTimeUnixNano),
    modelResponded(
      ctx(eventId(cap, traceId, s.span.spanId, "chat"), name),
      {
        response: {
          model: name,
          ...(typeof provider === "string" ? { provider } : {}),
          ...(Array.isArray(reasons) && typeof reasons[0] === "string"
            ? { finish: reasons[0] }
            : {}),
          ...(typeof input === "number"
            ? {
              usage: {
                input_tokens: input,
                output_tokens: typeof output === "number" ? output : null,
              },
            }
            : {}),
        },
      },
      { timestamp: iso(s.span.endTimeUnixNano) },
    ),
  );
}

/** The error object harness exported (`harness.error`), when it is one. */
function recordedError(m: AttrMap): Record<string, unknown> | null {
  const v = parseValue(m.get("harness.error"));
  return typeof v === "object" && v !== null && !Array.isArray(v)
    ? v as Record<string, unknown>
    : null;
}

/** A tool span's `tool.call.started` and, unless cut short, its end. */
export function toolItems(s: Found, out: SpanOut): void {
  const { cap, traceId, kinds, ctx, at, push } = out;
  const name = String(
    first(s.m, "gen_ai.tool.name", "tool.name", "traceloop.entity.name") ??
      s.span.name.replace(/^execute_tool /, ""),
  );
  const logical = first(s.m, "harness.tool.logical_id");
  const tool = {
    host_name: name,
    logical_id: typeof logical === "string" ? logical : null,
  };
  let args = parseValue(
    first(
      s.m,
      "gen_ai.tool.call.arguments",
      "input.value",
      "traceloop.entity.input",
    ),
  );
  if (typeof args !== "object" || args === null || Array.isArray(args)) {
    args = args === null || args === undefined ? {} : { input: args };
  }
  const callId = first(s.m, "gen_ai.tool.call.id");
  const common = {
    tool,
    arguments: args as Record<string, unknown>,
    ...(typeof callId === "string" ? { host_call_id: callId } : {}),
  };
  // A tool run inside another tool: its parent is that call.
  const parent =
    s.span.parentSpanId && kinds.get(s.span.parentSpanId) === "tool"
      ? eventId(cap, traceId, s.span.parentSpanId, "started")
      : undefined;
  const started = toolCallStarted(
    ctx(eventId(cap, traceId, s.span.spanId, "started")),
    common,
    {
      timestamp: iso(s.span.startTimeUnixNano),
      ...(parent ? { parentEventId: parent } : {}),
    },
  );
  push(at(s.m.get("harness.sequence"), s.span.startTimeUnixNano), started);
  if (s.m.get("harness.incomplete") === true) return;
  const opts = {
    parentEventId: started.event_id,
    timestamp: iso(s.span.endTimeUnixNano),
  };
  const id = eventId(cap, traceId, s.span.spanId, "ended");
  push(
    at(s.m.get("harness.completion.sequence"), s.span.endTimeUnixNano),
    s.span.status?.code === 2
      ? toolCallFailed(ctx(id), {
        ...common,
        error: recordedError(s.m) ?? {
          message: s.span.status.message ?? "error",
          type: String(first(s.m, "error.type") ?? "error"),
        },
      }, opts)
      : toolCallCompleted(ctx(id), {
        ...common,
        result: parseValue(
          first(
            s.m,
            "gen_ai.tool.call.result",
            "output.value",
            "traceloop.entity.output",
          ),
        ),
      }, opts),
  );
}
