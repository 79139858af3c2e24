/**
 * OpenTelemetry traces in (OTLP/HTTP JSON), so agents instrumented with
 * the GenAI conventions, OpenInference or OpenLLMetry can be captured,
 * lineage-reported and compiled like any other: tool spans become
 * `tool.call.started` and `tool.call.completed` (or `failed` with an error
 * status), chat/LLM spans `model.responded` with token usage, a trace an
 * episode (`gen_ai.conversation.id`, else the trace id), message span
 * events `message`s. All or nothing: a file that is not OTLP JSON is an
 * error naming where, and nothing is written.
 *
 * @module
 */
import type { UnsealedEvent } from "../trace/event.ts";
import { sha256Digest } from "../trace/hash.ts";
import { decodeOtlpProtobuf } from "./protobuf.ts";

const utf8Strict = new TextDecoder("utf-8", { fatal: true });

/**
 * An OTLP protobuf request starts with field 1 (byte 0x0a); JSON starts with
 * `{`, blanks or a byte-order mark. A file that starts with a newline is
 * tried as protobuf first, then as JSON.
 */
function parseOtlp(input: string | Uint8Array): OtlpTraces {
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
import {
  annotation,
  episodeFinished,
  episodeStarted,
  type EventContext,
  message,
  modelResponded,
  toolCallCompleted,
  toolCallFailed,
  toolCallStarted,
} from "../trace/events.ts";
import { ImportError } from "../importers/trajectories.ts";
import type { OtlpAttribute, OtlpSpan, OtlpTraces } from "./export.ts";

type AttrMap = Map<string, string | number | boolean>;

function attrs(list: OtlpAttribute[] | undefined): AttrMap {
  const m: AttrMap = new Map();
  for (const a of list ?? []) {
    const v = a.value as Record<string, unknown>;
    if ("stringValue" in v) m.set(a.key, String(v.stringValue));
    else if ("intValue" in v) m.set(a.key, Number(v.intValue));
    else if ("doubleValue" in v) m.set(a.key, Number(v.doubleValue));
    else if ("boolValue" in v) m.set(a.key, Boolean(v.boolValue));
  }
  return m;
}

function first(
  m: AttrMap,
  ...keys: string[]
): string | number | boolean | undefined {
  for (const k of keys) if (m.has(k)) return m.get(k);
  return undefined;
}

function iso(nanos: string | number | undefined): string {
  const ms = Number(BigInt(String(nanos ?? "0")) / 1_000_000n);
  return new Date(ms).toISOString();
}

function parseValue(v: unknown): unknown {
  if (typeof v !== "string") return v ?? null;
  const t = v.trimStart();
  if (
    t.startsWith("{") || t.startsWith("[") || t === "null" || /^-?\d/.test(t)
  ) {
    try {
      return JSON.parse(v);
    } catch { /* text */ }
  }
  return v;
}

function kindOf(m: AttrMap): "tool" | "chat" | "agent" | null {
  const op = String(first(m, "gen_ai.operation.name") ?? "");
  const oi = String(first(m, "openinference.span.kind") ?? "").toUpperCase();
  const tl = String(first(m, "traceloop.span.kind") ?? "").toLowerCase();
  if (op === "execute_tool" || oi === "TOOL" || tl === "tool") return "tool";
  if (
    op === "chat" || op === "text_completion" || op === "generate_content" ||
    oi === "LLM" || first(m, "llm.request.type") !== undefined
  ) return "chat";
  if (
    op === "invoke_agent" || oi === "AGENT" || tl === "agent" ||
    tl === "workflow"
  ) {
    return "agent";
  }
  return null;
}

/** The error object harness exported (`harness.error`), when it is one. */
function recordedError(m: AttrMap): Record<string, unknown> | null {
  const v = parseValue(m.get("harness.error"));
  return typeof v === "object" && v !== null && !Array.isArray(v)
    ? v as Record<string, unknown>
    : null;
}

interface Item {
  order: number;
  tie: number;
  ev: UnsealedEvent;
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
  const data = parseOtlp(input);
  if (!Array.isArray(data?.resourceSpans)) {
    throw new ImportError("file", "OTLP JSON has a resourceSpans list");
  }
  const spans: { span: OtlpSpan; where: string; m: AttrMap }[] = [];
  data.resourceSpans.forEach((rs, i) =>
    (rs.scopeSpans ?? []).forEach((ss, j) =>
      (ss.spans ?? []).forEach((span, k) => {
        const where = `resourceSpans[${i}].scopeSpans[${j}].spans[${k}]`;
        if (
          typeof span?.traceId !== "string" || typeof span.spanId !== "string"
        ) {
          throw new ImportError(where, "a span needs traceId and spanId");
        }
        spans.push({ span, where, m: attrs(span.attributes) });
      })
    )
  );
  if (spans.length === 0) {
    throw new ImportError("file", "has no spans; nothing to import");
  }
  const byTrace = new Map<string, typeof spans>();
  for (const s of spans) {
    const list = byTrace.get(s.span.traceId) ?? [];
    list.push(s);
    byTrace.set(s.span.traceId, list);
  }
  const episodes: { episode_id: string; events: UnsealedEvent[] }[] = [];
  for (const [traceId, list] of byTrace) {
    const root = list.find((s) => kindOf(s.m) === "agent") ??
      list.find((s) => !s.span.parentSpanId) ?? list[0];
    const episodeId = String(
      first(root.m, "gen_ai.conversation.id", "session.id") ??
        `trace_${traceId}`,
    ).replace(/[^A-Za-z0-9_.-]/g, "_").slice(0, 120);
    const ctx: EventContext = {
      captureId: options.captureId,
      episodeId,
      source: { host: "otlp", adapter: "import-otlp", model: null },
    };
    const items: Item[] = [];
    let tie = 0;
    const at = (seq: unknown, nanos: string | undefined) =>
      typeof seq === "number" ? seq : Number(BigInt(nanos ?? "0") / 1000n);
    const rootStart = root.span.startTimeUnixNano;
    items.push({
      order: -Infinity,
      tie: tie++,
      ev: episodeStarted(ctx, {
        reason: "import",
        provenance: {
          format: "otlp",
          file: options.fileName ?? null,
          file_sha256: digest,
          trace_id: traceId,
        },
      }, {
        timestamp: iso(rootStart),
      }),
    });
    for (const e of root.span.events ?? []) {
      const em = attrs(e.attributes);
      const role = e.name.includes("user")
        ? "user"
        : e.name.includes("assistant")
        ? "assistant"
        : null;
      if (!role) continue;
      items.push({
        order: at(em.get("harness.sequence"), e.timeUnixNano),
        tie: tie++,
        ev: message(ctx, {
          role,
          text: String(first(em, "gen_ai.message.content", "content") ?? ""),
        }, { timestamp: iso(e.timeUnixNano) }),
      });
    }
    for (const s of list) {
      const kind = kindOf(s.m);
      if (kind === "tool") {
        const name = String(
          first(
            s.m,
            "gen_ai.tool.name",
            "tool.name",
            "traceloop.entity.name",
          ) ??
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
        const started = toolCallStarted(ctx, {
          tool,
          arguments: args as Record<string, unknown>,
          ...(typeof callId === "string" ? { host_call_id: callId } : {}),
        }, { timestamp: iso(s.span.startTimeUnixNano) });
        items.push({
          order: at(s.m.get("harness.sequence"), s.span.startTimeUnixNano),
          tie: tie++,
          ev: started,
        });
        if (s.m.get("harness.incomplete") === true) continue;
        const endOrder = at(
          s.m.get("harness.completion.sequence"),
          s.span.endTimeUnixNano,
        );
        const common = {
          tool,
          arguments: args as Record<string, unknown>,
          ...(typeof callId === "string" ? { host_call_id: callId } : {}),
        };
        const opts = {
          parentEventId: started.event_id,
          timestamp: iso(s.span.endTimeUnixNano),
        };
        items.push({
          order: endOrder,
          tie: tie++,
          ev: s.span.status?.code === 2
            ? toolCallFailed(ctx, {
              ...common,
              error: recordedError(s.m) ?? {
                message: s.span.status.message ?? "error",
                type: String(first(s.m, "error.type") ?? "error"),
              },
            }, opts)
            : toolCallCompleted(ctx, {
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
        });
      } else if (kind === "chat") {
        const model = first(
          s.m,
          "gen_ai.request.model",
          "gen_ai.response.model",
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
        items.push({
          order: at(s.m.get("harness.sequence"), s.span.startTimeUnixNano),
          tie: tie++,
          ev: modelResponded({
            ...ctx,
            source: {
              ...ctx.source,
              model: typeof model === "string" ? model : null,
            },
          }, {
            response: {
              model: typeof model === "string" ? model : null,
              ...(typeof input === "number"
                ? {
                  usage: {
                    input_tokens: input,
                    output_tokens: typeof output === "number" ? output : null,
                  },
                }
                : {}),
            },
          }, { timestamp: iso(s.span.endTimeUnixNano) }),
        });
      }
    }
    const success = root.m.get("harness.outcome.success");
    if (typeof success === "boolean") {
      const outcome = root.m.get("harness.outcome");
      items.push({
        order: at(
          root.m.get("harness.outcome.sequence"),
          root.span.endTimeUnixNano,
        ),
        tie: tie++,
        ev: annotation(ctx, {
          type: "episode.outcome",
          success,
          outcome: typeof outcome === "string" ? parseValue(outcome) : null,
        }, { timestamp: iso(root.span.endTimeUnixNano) }),
      });
    }
    items.push({
      order: Infinity,
      tie: tie++,
      ev: episodeFinished(ctx, { reason: "imported" }, {
        timestamp: iso(root.span.endTimeUnixNano),
      }),
    });
    items.sort((a, b) => a.order - b.order || a.tie - b.tie);
    episodes.push({ episode_id: episodeId, events: items.map((i) => i.ev) });
  }
  return { digest, episodes };
}
