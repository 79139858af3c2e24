/**
 * OpenTelemetry traces in (OTLP/HTTP JSON or protobuf), so agents
 * instrumented with the GenAI conventions, OpenInference or OpenLLMetry can
 * be captured, lineage-reported and compiled like any other: tool spans
 * become `tool.call.started` and `tool.call.completed` (or `failed` with an
 * error status; a tool span under another keeps it as its parent), chat/LLM
 * spans `model.responded` with token usage, a trace an episode
 * (`gen_ai.conversation.id`, else the trace id), the user and assistant
 * texts of `gen_ai.input.messages` / `gen_ai.output.messages` (and the older
 * per-message span events) `message`s. Event ids are derived from the trace,
 * span and role, so the same spans always map to the same events.
 *
 * A file is all or nothing ({@linkcode convertOtlp}); the intake route maps
 * what is valid and reports what is not ({@linkcode mapOtlp}).
 *
 * @module
 */
import type { UnsealedEvent } from "../trace/event.ts";
import { sha256Digest } from "../trace/hash.ts";
import {
  annotation,
  episodeFinished,
  episodeStarted,
} from "../trace/episode_events.ts";
import type { EventContext } from "../trace/make_event.ts";
import { ImportError } from "../importers/import_error.ts";
import { assertSealable } from "../importers/sealable.ts";
import { decodeOtlpProtobuf } from "./protobuf_decode.ts";
import {
  type OtlpSpan,
  type OtlpTraces,
  SPAN_ID,
  TRACE_ID,
} from "./otlp_types.ts";
import { attrs, first, iso, kindOf, parseValue } from "./_attrs.ts";
import { runSteps } from "./bounded_steps.ts";
import {
  chatItem,
  eventId,
  type Found,
  messageItems,
  type SpanOut,
  toolItems,
} from "./_import_spans.ts";

const utf8Strict = new TextDecoder("utf-8", { fatal: true });

/**
 * Parse an OTLP request: protobuf starts with field 1 (byte 0x0a); JSON
 * with `{`, blanks or a byte-order mark. Bytes that start with a newline
 * are tried as protobuf first, then as JSON.
 *
 * @param input Text or bytes.
 * @returns The request in the JSON mapping.
 * @throws {ImportError} When it is neither.
 */
export function parseOtlp(input: string | Uint8Array): OtlpTraces {
  let protobufError: Error | null = null;
  if (typeof input !== "string" && input[0] === 0x0a) {
    try {
      return decodeOtlpProtobuf(input);
    } catch (err) {
      protobufError = err as Error;
    }
  }
  try {
    return JSON.parse(
      typeof input === "string" ? input : utf8Strict.decode(input),
    );
  } catch (err) {
    throw new ImportError(
      "file",
      protobufError
        ? `neither OTLP protobuf (${protobufError.message}) nor JSON (${
          (err as Error).message
        })`
        : `not JSON (${(err as Error).message})`,
    );
  }
}

interface Item {
  order: number;
  tie: number;
  ev: UnsealedEvent;
}

/** A span refused, and why. */
export interface OtlpRejection {
  /** Where in the request (`resourceSpans[0].scopeSpans[0].spans[3]`). */
  where: string;
  /** Why. */
  reason: string;
}

/** Options of {@linkcode mapOtlp}. */
export interface MapOtlpOptions {
  /** The capture the events go to. */
  captureId: string;
  /** Provenance written on `episode.started`. */
  provenance?: Record<string, unknown>;
  /**
   * Refuse invalid spans one by one (reported) rather than throw.
   * @default false
   */
  partial?: boolean;
  /**
   * Finish every episode (a file holds whole traces); otherwise only a
   * trace whose root span (no parent) is present gets `episode.finished`.
   * @default true
   */
  finishAll?: boolean;
  /**
   * Episode ids chosen for trace ids earlier (the intake keeps it, so the
   * spans of one trace sent in several requests land in one episode).
   */
  episodeOf?: Map<string, string>;
}

/** What {@linkcode mapOtlp} made. */
export interface MapOtlpResult {
  /** Episodes with their unsealed events (ids derived from the spans). */
  episodes: { episode_id: string; events: UnsealedEvent[] }[];
  /** Spans refused (only with `partial`). */
  rejected: OtlpRejection[];
  /** Spans mapped. */
  spans: number;
}

function problem(span: OtlpSpan): string | null {
  if (typeof span?.traceId !== "string" || !TRACE_ID.test(span.traceId)) {
    return `traceId ${
      JSON.stringify(span?.traceId)
    } is not 32 hex digits (not all zero)`;
  }
  if (typeof span.spanId !== "string" || !SPAN_ID.test(span.spanId)) {
    return `spanId ${
      JSON.stringify(span.spanId)
    } is not 16 hex digits (not all zero)`;
  }
  if (span.parentSpanId && !SPAN_ID.test(span.parentSpanId)) {
    return `parentSpanId ${
      JSON.stringify(span.parentSpanId)
    } is not 16 hex digits`;
  }
  return null;
}

/**
 * Map OTLP traces to capture episodes.
 *
 * @param data The request (JSON mapping).
 * @param options Capture, provenance, partial mode.
 * @returns Episodes, rejections, spans mapped.
 * @throws {ImportError} Naming the span that is wrong (not in partial mode).
 */
export function mapOtlp(
  data: OtlpTraces,
  options: MapOtlpOptions,
): MapOtlpResult {
  return runSteps(mapOtlpSteps(data, options));
}

/**
 * {@linkcode mapOtlp} as stepped work: it yields after each span, so a
 * time slicer (`bounded_steps.ts`) can run it beside other requests.
 *
 * @param data The request (JSON mapping).
 * @param options Capture, provenance, partial mode.
 * @returns The work; it returns what {@linkcode mapOtlp} returns.
 * @throws {ImportError} Naming the span that is wrong (not in partial mode).
 */
export function* mapOtlpSteps(
  data: OtlpTraces,
  options: MapOtlpOptions,
): Generator<void, MapOtlpResult> {
  if (!Array.isArray(data?.resourceSpans)) {
    throw new ImportError("file", "OTLP JSON has a resourceSpans list");
  }
  const spans: Found[] = [];
  const rejected: OtlpRejection[] = [];
  for (const [i, rs] of data.resourceSpans.entries()) {
    for (const [j, ss] of (rs?.scopeSpans ?? []).entries()) {
      for (const [k, span] of (ss?.spans ?? []).entries()) {
        const where = `resourceSpans[${i}].scopeSpans[${j}].spans[${k}]`;
        const why = problem(span);
        if (why && !options.partial) throw new ImportError(where, why);
        if (why) rejected.push({ where, reason: why });
        else {
          span.traceId = span.traceId.toLowerCase();
          span.spanId = span.spanId.toLowerCase();
          if (span.parentSpanId) {
            span.parentSpanId = span.parentSpanId.toLowerCase();
          }
          spans.push({ span, where, m: attrs(span.attributes) });
        }
        yield;
      }
    }
  }
  const byTrace = new Map<string, Found[]>();
  for (const s of spans) {
    const list = byTrace.get(s.span.traceId) ?? [];
    list.push(s);
    byTrace.set(s.span.traceId, list);
  }
  const episodes: MapOtlpResult["episodes"] = [];
  for (const [traceId, list] of byTrace) {
    episodes.push(yield* mapTrace(traceId, list, options));
  }
  return { episodes, rejected, spans: spans.length };
}

/**
 * The episode a trace maps to: the one it mapped to before, else its
 * conversation (or session) id, else `trace_<id>`; remembered in
 * `options.episodeOf`.
 */
function episodeIdOf(
  traceId: string,
  list: Found[],
  root: Found,
  options: MapOtlpOptions,
): string {
  const named = first(root.m, "gen_ai.conversation.id", "session.id") ??
    list.map((s) => first(s.m, "gen_ai.conversation.id", "session.id"))
      .find((v) => v !== undefined);
  const episodeId = options.episodeOf?.get(traceId) ??
    String(named ?? `trace_${traceId}`)
      .replace(/[^A-Za-z0-9_.-]/g, "_").slice(0, 120);
  options.episodeOf?.set(traceId, episodeId);
  return episodeId;
}

function* mapTrace(
  traceId: string,
  list: Found[],
  options: MapOtlpOptions,
): Generator<void, { episode_id: string; events: UnsealedEvent[] }> {
  const cap = options.captureId;
  const root = list.find((s) => kindOf(s.m) === "agent") ??
    list.find((s) => !s.span.parentSpanId) ?? list[0];
  const episodeId = episodeIdOf(traceId, list, root, options);
  const base: EventContext = {
    captureId: cap,
    episodeId,
    source: { host: "otlp", adapter: "import-otlp", model: null },
  };
  const ctx = (id: string, model: string | null = null): EventContext => ({
    ...base,
    source: { ...base.source, model },
    newId: () => id,
  });
  const items: Item[] = [];
  let tie = 0;
  const at = (seq: unknown, nanos: string | undefined) =>
    typeof seq === "number" ? seq : Number(BigInt(nanos ?? "0") / 1000n);
  const push = (order: number, ev: UnsealedEvent) =>
    items.push({ order, tie: tie++, ev });
  const kinds = new Map(list.map((s) => [s.span.spanId, kindOf(s.m)]));
  const out: SpanOut = { cap, episodeId, traceId, kinds, ctx, at, push };
  const startNanos = list.reduce(
    (min, s) =>
      BigInt(s.span.startTimeUnixNano ?? "0") < min
        ? BigInt(s.span.startTimeUnixNano ?? "0")
        : min,
    BigInt(root.span.startTimeUnixNano ?? "0"),
  ).toString();
  push(
    -Infinity,
    episodeStarted(ctx(eventId(cap, episodeId, "started")), {
      reason: "import",
      provenance: { format: "otlp", ...options.provenance, trace_id: traceId },
    }, { timestamp: iso(startNanos) }),
  );
  // Messages: one event per distinct (role, text, occurrence) in the episode.
  for (const s of list) {
    messageItems(s, out);
    yield;
  }
  for (const s of list) {
    const kind = kinds.get(s.span.spanId);
    if (kind === "tool") toolItems(s, out);
    else if (kind === "chat") chatItem(s, out);
    yield;
  }
  const success = root.m.get("harness.outcome.success");
  if (typeof success === "boolean") {
    const outcome = root.m.get("harness.outcome");
    push(
      at(root.m.get("harness.outcome.sequence"), root.span.endTimeUnixNano),
      annotation(ctx(eventId(cap, episodeId, "outcome")), {
        type: "episode.outcome",
        success,
        outcome: typeof outcome === "string" ? parseValue(outcome) : null,
      }, { timestamp: iso(root.span.endTimeUnixNano) }),
    );
  }
  if (options.finishAll !== false || !root.span.parentSpanId) {
    push(
      Infinity,
      episodeFinished(ctx(eventId(cap, episodeId, "finished")), {
        reason: "imported",
      }, { timestamp: iso(root.span.endTimeUnixNano) }),
    );
  }
  items.sort((a, b) => a.order - b.order || a.tie - b.tie);
  // The same message seen on two spans (a chat's history) is one event.
  const ids = new Set<string>();
  const events = items.map((i) => i.ev).filter((ev) =>
    ids.has(ev.event_id) ? false : (ids.add(ev.event_id), true)
  );
  return { episode_id: episodeId, events };
}

/**
 * Convert OTLP traces (JSON, or protobuf bytes) to capture episodes.
 *
 * @param input The file's text, or its bytes (JSON or an OTLP protobuf
 *   `ExportTraceServiceRequest`, told apart by the first byte).
 * @param options Capture id, file name.
 * @returns Episodes with their unsealed events.
 * @throws {ImportError} Naming the span that is wrong; nothing is converted.
 */
export function convertOtlp(
  input: string | Uint8Array,
  options: { captureId: string; fileName?: string },
): {
  digest: string;
  episodes: { episode_id: string; events: UnsealedEvent[] }[];
} {
  const digest = sha256Digest(input);
  const r = mapOtlp(parseOtlp(input), {
    captureId: options.captureId,
    provenance: { file: options.fileName ?? null, file_sha256: digest },
  });
  if (r.spans === 0) {
    throw new ImportError("file", "has no spans; nothing to import");
  }
  for (const e of r.episodes) {
    assertSealable(e.events, `episode ${e.episode_id}`);
  }
  return { digest, episodes: r.episodes };
}
