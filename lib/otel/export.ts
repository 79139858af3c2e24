/**
 * A capture as OpenTelemetry traces (OTLP/HTTP JSON), after the GenAI
 * semantic conventions: an episode is a trace with an `invoke_agent` root
 * span (`gen_ai.conversation.id` = episode id, the user's and assistant's
 * messages as `gen_ai.input.messages` / `gen_ai.output.messages`, the
 * outcome as attributes); a tool call is a span `execute_tool {name}`
 * (`gen_ai.operation.name`, `gen_ai.tool.name`, `gen_ai.tool.call.id`,
 * arguments and result as attributes within a size limit, error status from
 * `tool.call.failed`); a model response is a span `chat {model}` with token
 * usage. Every span carries the harness event id and hash it came from.
 * Trace and span ids are derived from event ids, so the same capture always
 * exports the same ids. The spans are built by
 * {@linkcode OtlpSpanBuilder} (`span_builder.ts`).
 *
 * @module
 */
import type { TraceEvent } from "../trace/event.ts";
import { type OtlpSpan, type OtlpTraces, str } from "./otlp_types.ts";
import { OtlpSpanBuilder } from "./span_builder.ts";

/** Options of {@linkcode captureToOtlp}. */
export interface OtlpExportOptions {
  /** Longest argument or result value kept, in characters. @default 8192 */
  maxValueChars?: number;
  /** `service.name`. @default "harness" */
  serviceName?: string;
}

/**
 * Wrap spans in an export request.
 *
 * @param captureId The capture (a resource attribute).
 * @param spans The spans.
 * @param serviceName `service.name`.
 * @returns The request.
 */
export function otlpRequest(
  captureId: string,
  spans: OtlpSpan[],
  serviceName = "harness",
): OtlpTraces {
  return {
    resourceSpans: [{
      resource: {
        attributes: [
          str("service.name", serviceName),
          str("harness.capture_id", captureId),
        ],
      },
      scopeSpans: [{ scope: { name: "harness", version: "0.1.0" }, spans }],
    }],
  };
}

/**
 * Map a capture's events to OTLP traces: per episode its root span first,
 * then its spans in the order their calls started.
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
  const builder = new OtlpSpanBuilder(captureId, options);
  const spans: OtlpSpan[] = [];
  for (const ev of events) spans.push(...builder.add(ev));
  spans.push(...builder.finish());
  // A root sent again (a late outcome) replaces its first version.
  const last = new Map<string, OtlpSpan>();
  for (const span of spans) last.set(span.spanId, span);
  spans.length = 0;
  spans.push(...new Set(last.values()));
  const sortKey = new Map<OtlpSpan, number>();
  for (const span of spans) {
    const seq = span.attributes.find((a) => a.key === "harness.sequence");
    sortKey.set(
      span,
      seq ? Number((seq.value as { intValue: string }).intValue) : -1,
    );
  }
  // Traces in the order their episodes started (every trace has its root).
  const firstSeq = new Map<string, number>();
  for (const ev of events) {
    if (!firstSeq.has(ev.episode_id)) firstSeq.set(ev.episode_id, ev.sequence);
  }
  const traceOrder = new Map<string, number>();
  for (const span of spans) {
    if (span.parentSpanId) continue;
    const ep = span.attributes.find((a) => a.key === "gen_ai.conversation.id");
    traceOrder.set(
      span.traceId,
      firstSeq.get((ep?.value as { stringValue: string }).stringValue)!,
    );
  }
  spans.sort((a, b) =>
    (traceOrder.get(a.traceId)! - traceOrder.get(b.traceId)!) ||
    (sortKey.get(a)! - sortKey.get(b)!)
  );
  return otlpRequest(captureId, spans, options.serviceName);
}
