/**
 * Reading OTLP spans: attribute maps, values, span kinds and the messages
 * of the GenAI conventions (`gen_ai.input.messages` /
 * `gen_ai.output.messages`, and the older per-message span events).
 *
 * @module
 */
import type { OtlpAnyValue, OtlpAttribute, OtlpSpan } from "./otlp_types.ts";
import { ImportError } from "../importers/import_error.ts";
import { MAX_OTLP_ARRAY_DEPTH } from "./bounded_caps.ts";

/** Attribute values by key (arrays as JSON text). */
export type AttrMap = Map<string, string | number | boolean>;

function plain(v: OtlpAnyValue, key: string, depth = 0): unknown {
  const o = v as Record<string, unknown>;
  if ("stringValue" in o) return String(o.stringValue);
  if ("intValue" in o) return Number(o.intValue);
  if ("doubleValue" in o) return Number(o.doubleValue);
  if ("boolValue" in o) return Boolean(o.boolValue);
  if ("arrayValue" in o) {
    if (depth >= MAX_OTLP_ARRAY_DEPTH) {
      throw new ImportError(
        `attribute ${JSON.stringify(key.slice(0, 80))}`,
        `arrays nested deeper than ${MAX_OTLP_ARRAY_DEPTH} levels, the limit: flatten the value`,
      );
    }
    return ((o.arrayValue as { values?: OtlpAnyValue[] }).values ?? []).map(
      (item) => plain(item, key, depth + 1),
    );
  }
  return null;
}

/** The attributes of a span or event as a map. */
export function attrs(list: OtlpAttribute[] | undefined): AttrMap {
  const m: AttrMap = new Map();
  for (const a of list ?? []) {
    const v = plain(a.value ?? {} as OtlpAnyValue, a.key);
    if (v === null) continue;
    m.set(a.key, Array.isArray(v) ? JSON.stringify(v) : v as string);
  }
  return m;
}

/** The first of `keys` the map has. */
export function first(
  m: AttrMap,
  ...keys: string[]
): string | number | boolean | undefined {
  for (const k of keys) if (m.has(k)) return m.get(k);
  return undefined;
}

/** Nanoseconds since the epoch as an ISO timestamp. */
export function iso(nanos: string | number | undefined): string {
  const ms = Number(BigInt(String(nanos ?? "0")) / 1_000_000n);
  return new Date(ms).toISOString();
}

/** A string value that holds JSON, parsed; other text as is. */
export function parseValue(v: unknown): unknown {
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

/** What a span is, by GenAI, OpenInference or OpenLLMetry names. */
export function kindOf(m: AttrMap): "tool" | "chat" | "agent" | null {
  const op = String(first(m, "gen_ai.operation.name") ?? "");
  const oi = String(first(m, "openinference.span.kind") ?? "").toUpperCase();
  const tl = String(first(m, "traceloop.span.kind") ?? "").toLowerCase();
  if (op === "execute_tool" || oi === "TOOL" || tl === "tool") return "tool";
  if (
    op === "chat" || op === "text_completion" || op === "generate_content" ||
    oi === "LLM" || first(m, "llm.request.type") !== undefined
  ) return "chat";
  if (
    op === "invoke_agent" || op === "create_agent" || oi === "AGENT" ||
    tl === "agent" || tl === "workflow"
  ) {
    return "agent";
  }
  return null;
}

/** A user or assistant text found on a span. */
export interface FoundMessage {
  /** `user` or `assistant`. */
  role: "user" | "assistant";
  /** The text. */
  text: string;
  /** When (ns). */
  nanos: string;
  /** Harness sequence, when harness exported it. */
  sequence?: number;
}

function textOf(content: unknown): string | null {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return null;
  const texts = content.flatMap((p) => {
    const part = p as Record<string, unknown>;
    if (typeof p === "string") return [p];
    if (part?.type === "text" || part?.type === undefined) {
      const t = part?.content ?? part?.text;
      return typeof t === "string" ? [t] : [];
    }
    return [];
  });
  return texts.length ? texts.join("\n") : null;
}

/** Messages of a `gen_ai.*.messages` value (parts, or OpenAI-like content). */
function listMessages(
  raw: unknown,
  want: "user" | "assistant",
  nanos: string,
  sequences: unknown,
): FoundMessage[] {
  const list = parseValue(raw);
  if (!Array.isArray(list)) return [];
  const seqs = Array.isArray(parseValue(sequences))
    ? parseValue(sequences) as unknown[]
    : [];
  const out: FoundMessage[] = [];
  list.forEach((item, i) => {
    const m = item as Record<string, unknown>;
    if (m?.role !== want) return;
    const text = textOf(m.parts ?? m.content);
    if (text === null || text === "") return;
    const seq = seqs[i];
    out.push({
      role: want,
      text,
      nanos,
      ...(typeof seq === "number" ? { sequence: seq } : {}),
    });
  });
  return out;
}

/**
 * The user and assistant texts of a span: user messages of its input,
 * assistant messages of its output, and the older per-message events
 * (`gen_ai.user.message`, `gen_ai.assistant.message`, `gen_ai.choice`).
 */
export function spanMessages(span: OtlpSpan, m: AttrMap): FoundMessage[] {
  const out = [
    ...listMessages(
      first(m, "gen_ai.input.messages"),
      "user",
      span.startTimeUnixNano,
      m.get("harness.input.sequences"),
    ),
  ];
  for (const e of span.events ?? []) {
    const em = attrs(e.attributes);
    const role = e.name === "gen_ai.user.message"
      ? "user"
      : e.name === "gen_ai.assistant.message" || e.name === "gen_ai.choice"
      ? "assistant"
      : null;
    if (!role) continue;
    const nested = parseValue(em.get("message"));
    const text = textOf(
      first(em, "content", "gen_ai.message.content") ??
        (nested as Record<string, unknown> | null)?.content,
    );
    if (text === null || text === "") continue;
    const seq = em.get("harness.sequence");
    out.push({
      role,
      text,
      nanos: e.timeUnixNano,
      ...(typeof seq === "number" ? { sequence: seq } : {}),
    });
  }
  out.push(
    ...listMessages(
      first(m, "gen_ai.output.messages"),
      "assistant",
      span.endTimeUnixNano,
      m.get("harness.output.sequences"),
    ),
  );
  return out;
}
