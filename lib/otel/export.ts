/**
 * A capture as OpenTelemetry traces (OTLP/HTTP JSON), after the GenAI
 * semantic conventions: an episode is a trace with an `invoke_agent` root
 * span (`gen_ai.conversation.id` = episode id, user and assistant messages
 * as span events, the outcome as attributes); a tool call is a span
 * `execute_tool {name}` (`gen_ai.operation.name`, `gen_ai.tool.name`,
 * `gen_ai.tool.call.id`, arguments and result as attributes within a size
 * limit, error status from `tool.call.failed`); a model response is a span
 * `chat {model}` with token usage. Every span carries the harness event id
 * and hash it came from. Trace and span ids are derived from event ids, so
 * the same capture always exports the same ids.
 *
 * @module
 */
import type { TraceEvent } from "../trace/event.ts";
import { sha256Hex } from "../trace/hash.ts";
import { completionsByStart } from "../trace/completions.ts";
import { canonicalJson } from "../trace/canonical_json.ts";

/** An OTLP attribute. */
export interface OtlpAttribute {
  /** Key. */
  key: string;
  /** Value (one of the OTLP value kinds). */
  value:
    | { stringValue: string }
    | { intValue: string }
    | { doubleValue: number }
    | { boolValue: boolean };
}

/** An OTLP span (JSON mapping: hex ids, nanosecond strings). */
export interface OtlpSpan {
  /** 32 hex. */
  traceId: string;
  /** 16 hex. */
  spanId: string;
  /** 16 hex, absent for a root. */
  parentSpanId?: string;
  /** Span name. */
  name: string;
  /** 1 internal, 3 client. */
  kind: number;
  /** Start, ns since the epoch, as a string. */
  startTimeUnixNano: string;
  /** End, ns, as a string. */
  endTimeUnixNano: string;
  /** Attributes. */
  attributes: OtlpAttribute[];
  /** Span events. */
  events?: {
    timeUnixNano: string;
    name: string;
    attributes: OtlpAttribute[];
  }[];
  /** 0 unset, 1 ok, 2 error. */
  status: { code: number; message?: string };
}

/** An OTLP/HTTP JSON export request. */
export interface OtlpTraces {
  /** Resource spans. */
  resourceSpans: {
    resource: { attributes: OtlpAttribute[] };
    scopeSpans: {
      scope: { name: string; version: string };
      spans: OtlpSpan[];
    }[];
  }[];
}

/** Options of {@linkcode captureToOtlp}. */
export interface OtlpExportOptions {
  /** Longest argument or result value kept, in characters. @default 8192 */
  maxValueChars?: number;
  /** `service.name`. @default "harness" */
  serviceName?: string;
}

/** A string attribute. */
export function str(key: string, v: string): OtlpAttribute {
  return { key, value: { stringValue: v } };
}

function int(key: string, v: number): OtlpAttribute {
  return { key, value: { intValue: String(Math.round(v)) } };
}

function nanos(iso: string): string {
  return (BigInt(Date.parse(iso)) * 1_000_000n).toString();
}

/** A deterministic id of `bytes` bytes (hex) from a seed. */
export function derivedId(seed: string, bytes: 8 | 16): string {
  return sha256Hex(seed).slice(0, bytes * 2);
}

function clip(value: unknown, max: number): string {
  const text = typeof value === "string" ? value : canonicalJson(value ?? null);
  return text.length > max ? text.slice(0, max) + "…[truncated]" : text;
}

/**
 * Map a capture's events to OTLP traces.
 *
 * @param captureId The capture.
 * @param events Its events in sequence order (blob references resolved).
 * @param options Size limit, service name.
 * @returns The export request.
 */
export function captureToOtlp(
  captureId: string,
  events: TraceEvent[],
  options: OtlpExportOptions = {},
): OtlpTraces {
  const max = options.maxValueChars ?? 8192;
  const byEpisode = new Map<string, TraceEvent[]>();
  for (const ev of events) {
    if (ev.episode_id === "_capture") continue;
    const list = byEpisode.get(ev.episode_id) ?? [];
    list.push(ev);
    byEpisode.set(ev.episode_id, list);
  }
  const spans: OtlpSpan[] = [];
  for (const [episodeId, evs] of byEpisode) {
    const traceId = derivedId(`${captureId}/${episodeId}`, 16);
    const rootId = derivedId(`${captureId}/${episodeId}/root`, 8);
    const root: OtlpSpan = {
      traceId,
      spanId: rootId,
      name: `invoke_agent ${episodeId}`,
      kind: 1,
      startTimeUnixNano: nanos(evs[0].timestamp),
      endTimeUnixNano: nanos(evs[evs.length - 1].timestamp),
      attributes: [
        str("gen_ai.operation.name", "invoke_agent"),
        str("gen_ai.conversation.id", episodeId),
        str("harness.capture_id", captureId),
        str("harness.event_id", evs[0].event_id),
        str("harness.event_hash", evs[0].event_hash),
      ],
      events: [],
      status: { code: 0 },
    };
    spans.push(root);
    const done = completionsByStart(evs);
    for (const ev of evs) {
      const p = ev.payload as Record<string, unknown>;
      if (ev.kind === "message") {
        root.events!.push({
          timeUnixNano: nanos(ev.timestamp),
          name: p.role === "user"
            ? "gen_ai.user.message"
            : "gen_ai.assistant.message",
          attributes: [
            str("gen_ai.message.content", String(p.text ?? "")),
            str("harness.event_id", ev.event_id),
            int("harness.sequence", ev.sequence),
          ],
        });
      } else if (
        ev.kind === "annotation" && p.type === "episode.outcome"
      ) {
        root.attributes.push({
          key: "harness.outcome.success",
          value: { boolValue: p.success === true },
        }, int("harness.outcome.sequence", ev.sequence));
        if (p.outcome !== undefined && p.outcome !== null) {
          root.attributes.push(
            str("harness.outcome", canonicalJson(p.outcome)),
          );
        }
        if (p.success === false) root.status = { code: 2, message: "failed" };
      } else if (ev.kind === "tool.call.started") {
        const tool = p.tool as { host_name: string; logical_id: string | null };
        const end = done.get(ev.event_id);
        const span: OtlpSpan = {
          traceId,
          spanId: derivedId(ev.event_id, 8),
          parentSpanId: rootId,
          name: `execute_tool ${tool.host_name}`,
          kind: 1,
          startTimeUnixNano: nanos(ev.timestamp),
          endTimeUnixNano: nanos(end?.timestamp ?? ev.timestamp),
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
        if (end) {
          const ep = end.payload as Record<string, unknown>;
          span.attributes.push(
            str("harness.completion.event_id", end.event_id),
            str("harness.completion.event_hash", end.event_hash),
            int("harness.completion.sequence", end.sequence),
          );
          if (end.kind === "tool.call.failed") {
            span.status = { code: 2, message: errorMessage(ep.error) };
            span.attributes.push(
              str("error.type", errorType(ep.error)),
              str("harness.error", clip(ep.error, max)),
            );
          } else {
            span.attributes.push(
              str("gen_ai.tool.call.result", clip(ep.result, max)),
            );
            span.status = { code: 1 };
          }
        } else {
          span.attributes.push({
            key: "harness.incomplete",
            value: { boolValue: true },
          });
        }
        spans.push(span);
      } else if (ev.kind === "model.responded") {
        const r = (p.response ?? {}) as {
          model?: string | null;
          usage?: {
            input_tokens?: number | null;
            output_tokens?: number | null;
          };
        };
        const model = r.model ?? ev.source.model ?? "model";
        spans.push({
          traceId,
          spanId: derivedId(ev.event_id, 8),
          parentSpanId: rootId,
          name: `chat ${model}`,
          kind: 3,
          startTimeUnixNano: nanos(ev.timestamp),
          endTimeUnixNano: nanos(ev.timestamp),
          attributes: [
            str("gen_ai.operation.name", "chat"),
            str("gen_ai.request.model", model),
            ...(typeof r.usage?.input_tokens === "number"
              ? [int("gen_ai.usage.input_tokens", r.usage.input_tokens)]
              : []),
            ...(typeof r.usage?.output_tokens === "number"
              ? [int("gen_ai.usage.output_tokens", r.usage.output_tokens)]
              : []),
            str("harness.event_id", ev.event_id),
            str("harness.event_hash", ev.event_hash),
            int("harness.sequence", ev.sequence),
          ],
          status: { code: 0 },
        });
      }
    }
  }
  return {
    resourceSpans: [{
      resource: {
        attributes: [
          str("service.name", options.serviceName ?? "harness"),
          str("harness.capture_id", captureId),
        ],
      },
      scopeSpans: [{ scope: { name: "harness", version: "0.1.0" }, spans }],
    }],
  };
}

function errorMessage(error: unknown): string {
  const m = (error as { message?: unknown } | null)?.message;
  return typeof m === "string" ? m : clip(error, 1024);
}

function errorType(error: unknown): string {
  if (typeof error === "object" && error !== null) {
    const e = error as { type?: unknown; code?: unknown; name?: unknown };
    for (const v of [e.code, e.type, e.name]) {
      if (typeof v === "string" && v) return v;
    }
  }
  return "error";
}
