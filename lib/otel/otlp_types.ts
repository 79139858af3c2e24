/**
 * The OTLP/HTTP JSON mapping of traces as harness reads and writes it
 * (hex ids, nanosecond strings), with small builders for attributes.
 *
 * @module
 */
import { sha256Hex } from "../trace/hash.ts";
import { canonicalJson } from "../trace/canonical_json.ts";

/** An OTLP `AnyValue` (the kinds harness reads and writes). */
export type OtlpAnyValue =
  | { stringValue: string }
  | { intValue: string }
  | { doubleValue: number }
  | { boolValue: boolean }
  | { arrayValue: { values: OtlpAnyValue[] } };

/** An OTLP attribute. */
export interface OtlpAttribute {
  /** Key. */
  key: string;
  /** Value (one of the OTLP value kinds). */
  value: OtlpAnyValue;
}

/** An OTLP span event. */
export interface OtlpSpanEvent {
  /** When, ns since the epoch, as a string. */
  timeUnixNano: string;
  /** Event name. */
  name: string;
  /** Attributes. */
  attributes: OtlpAttribute[];
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
  events?: OtlpSpanEvent[];
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

/**
 * A string attribute.
 *
 * @param key Attribute name.
 * @param v Its value.
 * @returns The attribute.
 */
export function str(key: string, v: string): OtlpAttribute {
  return { key, value: { stringValue: v } };
}

/**
 * An integer attribute.
 *
 * @param key Attribute name.
 * @param v Its value (rounded).
 * @returns The attribute.
 */
export function int(key: string, v: number): OtlpAttribute {
  return { key, value: { intValue: String(Math.round(v)) } };
}

/**
 * A string-array attribute.
 *
 * @param key Attribute name.
 * @param values Its values.
 * @returns The attribute.
 */
export function strings(key: string, values: string[]): OtlpAttribute {
  return {
    key,
    value: { arrayValue: { values: values.map((v) => ({ stringValue: v })) } },
  };
}

/**
 * Nanoseconds since the epoch, as OTLP JSON writes them.
 *
 * @param iso An ISO timestamp.
 * @returns The nanoseconds as a decimal string.
 */
export function nanos(iso: string): string {
  return (BigInt(Date.parse(iso)) * 1_000_000n).toString();
}

/**
 * A deterministic id of `bytes` bytes (hex) from a seed.
 *
 * @param seed Anything that names the thing.
 * @param bytes 8 for a span id, 16 for a trace id.
 * @returns Lower-case hex.
 */
export function derivedId(seed: string, bytes: 8 | 16): string {
  return sha256Hex(seed).slice(0, bytes * 2);
}

/**
 * A value as text within a size limit (JSON unless it is a string).
 *
 * @param value Anything.
 * @param max Longest text kept, in characters.
 * @returns The text, marked when cut.
 */
export function clip(value: unknown, max: number): string {
  const text = typeof value === "string" ? value : canonicalJson(value ?? null);
  return text.length > max ? text.slice(0, max) + "…[truncated]" : text;
}

/** A trace id: 32 hex digits, not all zero. */
export const TRACE_ID = /^(?!0{32})[0-9a-fA-F]{32}$/;
/** A span id: 16 hex digits, not all zero. */
export const SPAN_ID = /^(?!0{16})[0-9a-fA-F]{16}$/;
