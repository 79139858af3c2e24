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

/** Options of an {@linkcode OtlpSpanBuilder}. */
export interface OtlpSpanBuilderOptions {
  /** Longest argument or result value kept, in characters. @default 8192 */
  maxValueChars?: number;
  /**
   * Episodes whose root span is held open at once; past it the oldest root
   * is finished early (its later spans still name it as parent).
   * @default Infinity
   */
  maxOpenEpisodes?: number;
  /**
   * Tool calls held open (started, not completed) at once; past it the
   * oldest is finished early as incomplete.
   * @default Infinity
   */
  maxOpenCalls?: number;
}

/** Finished episodes remembered (so late events do not open a second root). */
const CLOSED_EPISODES_KEPT = 100_000;

interface OpenEpisode {
  traceId: string;
  rootId: string;
  root: OtlpSpan;
  /** Timestamp of its latest event (the root's end, set when it finishes). */
  last: string;
}

/**
 * Builds spans event by event, for a whole capture or a live stream: a
 * chat span as soon as the model responded, a tool span when its call
 * completes or fails, an episode's root span when the episode gets its
 * outcome (or at {@linkcode OtlpSpanBuilder.finish}). Ids are derived from
 * event ids, so a stream and a whole-capture export give the same spans.
 */
export class OtlpSpanBuilder {
  readonly #captureId: string;
  readonly #max: number;
  readonly #maxEpisodes: number;
  readonly #maxCalls: number;
  readonly #episodes = new Map<string, OpenEpisode>();
  readonly #calls = new Map<string, OtlpSpan>();
  /** Episodes whose root was sent (bounded like the open ones). */
  readonly #closed = new Set<string>();

  /**
   * Create a builder.
   *
   * @param captureId The capture the events belong to.
   * @param options Size limit and bounds.
   */
  constructor(captureId: string, options: OtlpSpanBuilderOptions = {}) {
    this.#captureId = captureId;
    this.#max = options.maxValueChars ?? 8192;
    this.#maxEpisodes = options.maxOpenEpisodes ?? Infinity;
    this.#maxCalls = options.maxOpenCalls ?? Infinity;
  }

  #episode(ev: TraceEvent, out: OtlpSpan[]): OpenEpisode {
    const open = this.#episodes.get(ev.episode_id);
    if (open) {
      open.last = ev.timestamp;
      return open;
    }
    const ids = {
      traceId: derivedId(`${this.#captureId}/${ev.episode_id}`, 16),
      rootId: derivedId(`${this.#captureId}/${ev.episode_id}/root`, 8),
    };
    if (this.#closed.has(ev.episode_id)) {
      // The root went out already: later spans still hang under it.
      return {
        ...ids,
        root: rootSpan(this.#captureId, ev, ids),
        last: ev.timestamp,
      };
    }
    const fresh = {
      ...ids,
      root: rootSpan(this.#captureId, ev, ids),
      last: ev.timestamp,
    };
    this.#episodes.set(ev.episode_id, fresh);
    if (this.#episodes.size > this.#maxEpisodes) {
      const oldest = this.#episodes.keys().next().value!;
      out.push(...this.finishEpisode(oldest));
    }
    return fresh;
  }

  /**
   * Take one event.
   *
   * @param ev The next event of the capture, in sequence order.
   * @returns The spans this event finished (often none).
   */
  add(ev: TraceEvent): OtlpSpan[] {
    if (ev.episode_id === "_capture") return [];
    const out: OtlpSpan[] = [];
    const { traceId, rootId, root } = this.#episode(ev, out);
    const p = ev.payload as Record<string, unknown>;
    const max = this.#max;
    if (ev.kind === "message") {
      (root.events ??= []).push({
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
    } else if (ev.kind === "annotation" && p.type === "episode.outcome") {
      root.attributes.push({
        key: "harness.outcome.success",
        value: { boolValue: p.success === true },
      }, int("harness.outcome.sequence", ev.sequence));
      if (p.outcome !== undefined && p.outcome !== null) {
        root.attributes.push(str("harness.outcome", canonicalJson(p.outcome)));
      }
      if (p.success === false) root.status = { code: 2, message: "failed" };
      out.push(...this.finishEpisode(ev.episode_id));
    } else if (ev.kind === "tool.call.started") {
      const tool = p.tool as { host_name: string; logical_id: string | null };
      this.#calls.set(ev.event_id, {
        traceId,
        spanId: derivedId(ev.event_id, 8),
        parentSpanId: rootId,
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
      });
      if (this.#calls.size > this.#maxCalls) {
        const oldest = this.#calls.keys().next().value!;
        out.push(incomplete(this.#calls.get(oldest)!));
        this.#calls.delete(oldest);
      }
    } else if (
      (ev.kind === "tool.call.completed" || ev.kind === "tool.call.failed") &&
      ev.parent_event_id && this.#calls.has(ev.parent_event_id)
    ) {
      const span = this.#calls.get(ev.parent_event_id)!;
      this.#calls.delete(ev.parent_event_id);
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
      out.push(span);
    } else if (ev.kind === "model.responded") {
      out.push(chatSpan(ev, traceId, rootId));
    }
    return out;
  }

  /**
   * Finish one episode now: its root span, and its open calls as incomplete.
   *
   * @param episodeId The episode.
   * @returns The spans finished.
   */
  finishEpisode(episodeId: string): OtlpSpan[] {
    const open = this.#episodes.get(episodeId);
    if (!open) return [];
    open.root.endTimeUnixNano = nanos(open.last);
    const out: OtlpSpan[] = [open.root];
    for (const [id, span] of this.#calls) {
      if (span.traceId !== open.traceId) continue;
      out.push(incomplete(span));
      this.#calls.delete(id);
    }
    this.#episodes.delete(episodeId);
    this.#closed.add(episodeId);
    if (this.#closed.size > CLOSED_EPISODES_KEPT) {
      this.#closed.delete(this.#closed.values().next().value!);
    }
    return out;
  }

  /**
   * Finish everything still open (roots and incomplete calls).
   *
   * @returns The spans finished.
   */
  finish(): OtlpSpan[] {
    const out: OtlpSpan[] = [];
    for (const id of [...this.#episodes.keys()]) {
      out.push(...this.finishEpisode(id));
    }
    for (const span of this.#calls.values()) out.push(incomplete(span));
    this.#calls.clear();
    return out;
  }
}

function rootSpan(
  captureId: string,
  ev: TraceEvent,
  ids: { traceId: string; rootId: string },
): OtlpSpan {
  return {
    traceId: ids.traceId,
    spanId: ids.rootId,
    name: `invoke_agent ${ev.episode_id}`,
    kind: 1,
    startTimeUnixNano: nanos(ev.timestamp),
    endTimeUnixNano: nanos(ev.timestamp),
    attributes: [
      str("gen_ai.operation.name", "invoke_agent"),
      str("gen_ai.conversation.id", ev.episode_id),
      str("harness.capture_id", captureId),
      str("harness.event_id", ev.event_id),
      str("harness.event_hash", ev.event_hash),
    ],
    status: { code: 0 },
  };
}

function incomplete(span: OtlpSpan): OtlpSpan {
  span.attributes.push({
    key: "harness.incomplete",
    value: { boolValue: true },
  });
  return span;
}

function chatSpan(ev: TraceEvent, traceId: string, rootId: string): OtlpSpan {
  const r = ((ev.payload as Record<string, unknown>).response ?? {}) as {
    model?: string | null;
    usage?: { input_tokens?: number | null; output_tokens?: number | null };
  };
  const model = r.model ?? ev.source.model ?? "model";
  return {
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
  };
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
