/**
 * The caps on one OTLP request and their book-keeping, shared by the
 * protobuf and JSON readers (`bounded_protobuf.ts`, `bounded_json.ts`):
 * at most {@linkcode DEFAULT_MAX_OTLP_SPANS} spans,
 * {@linkcode DEFAULT_MAX_OTLP_ATTRIBUTES} attributes over them and
 * {@linkcode DEFAULT_MAX_OTLP_SPAN_ATTRIBUTES} on one span. Counting: an
 * attribute of a span or of one of its events is one, so is each element
 * of an array value and each event. A span may also not hold more than
 * {@linkcode FIELDS_PER_ATTRIBUTE} times its cap in protobuf fields or
 * JSON values (repeated or unknown ones cost decoding time too), nor nest
 * arrays deeper than {@linkcode MAX_OTLP_ARRAY_DEPTH}.
 *
 * @module
 */
import type { OtlpSpan, OtlpTraces } from "./otlp_types.ts";

/** Default most spans in one request. */
export const DEFAULT_MAX_OTLP_SPANS = 10_000;
/** Default most attributes in one request, over all its spans. */
export const DEFAULT_MAX_OTLP_ATTRIBUTES = 200_000;
/** Default most attributes on one span (with its events'). */
export const DEFAULT_MAX_OTLP_SPAN_ATTRIBUTES = 1_024;
/** Protobuf fields or JSON values a span may hold per attribute of its cap. */
export const FIELDS_PER_ATTRIBUTE = 8;
/** Arrays nested deeper than this make a span refused. */
export const MAX_OTLP_ARRAY_DEPTH = 32;

/** Caps on one OTLP request. */
export interface OtlpLimits {
  /** Spans per request. @default DEFAULT_MAX_OTLP_SPANS */
  maxSpans?: number;
  /** Attributes per request. @default DEFAULT_MAX_OTLP_ATTRIBUTES */
  maxAttributes?: number;
  /** Attributes per span. @default DEFAULT_MAX_OTLP_SPAN_ATTRIBUTES */
  maxSpanAttributes?: number;
}

/** Spans a cap refused, by reason. */
export interface OtlpCapRefusal {
  /** Why, naming the cap. */
  reason: string;
  /** How many spans. */
  count: number;
}

/** The spans of one trace under one resource, within the caps. */
export interface OtlpTraceSpans {
  /** The resource they came under (its attributes may name the capture). */
  resource: OtlpTraces["resourceSpans"][number]["resource"];
  /** How many spans. */
  count: number;
  /**
   * The spans, decoded (protobuf) or parsed (JSON) now, a span a step.
   *
   * @returns The work; it returns the spans (JSON mapping).
   * @throws {OtlpProtobufError} When a protobuf span cannot be decoded.
   * @throws {ImportError} When a JSON span cannot be parsed.
   */
  spans(): Generator<void, OtlpSpan[]>;
}

/** What `readOtlpSteps` (`bounded_decode.ts`) read. */
export interface BoundedOtlp {
  /**
   * The spans within the caps, by resource, then trace in the order first
   * seen: each mapped alone, so what a request holds at once is one trace.
   */
  traces: OtlpTraceSpans[];
  /** Spans refused by the caps. */
  refused: OtlpCapRefusal[];
}

/** Bytes `start` to `stop` of a buffer (a span not decoded yet). */
export interface Range {
  /** The buffer. */
  buf: Uint8Array;
  /** First byte. */
  start: number;
  /** Past the last byte. */
  stop: number;
}

/**
 * Spans grouped by resource and trace as a request is read, each kept as
 * an item `T` (its bytes) until its trace is mapped.
 */
export class TraceGroups<T> {
  #traces: OtlpTraceSpans[] = [];
  #byTrace = new Map<string, T[]>();
  #resource: OtlpTraceSpans["resource"] = { attributes: [] };
  readonly #decode: (items: T[]) => Generator<void, OtlpSpan[]>;

  /**
   * Create the groups.
   *
   * @param decode How a trace's items become spans, a step each.
   */
  constructor(decode: (items: T[]) => Generator<void, OtlpSpan[]>) {
    this.#decode = decode;
  }

  /**
   * Spans from now on are under `resource`.
   *
   * @param resource The resource.
   */
  open(resource: OtlpTraceSpans["resource"]): void {
    this.close();
    this.#resource = resource;
  }

  /**
   * Keep a span with its trace.
   *
   * @param traceId Its trace id, lower case ("" when it has none).
   * @param item The span, not decoded yet.
   */
  add(traceId: string, item: T): void {
    const list = this.#byTrace.get(traceId);
    if (list) list.push(item);
    else this.#byTrace.set(traceId, [item]);
  }

  /** The resource's spans are all read. */
  close(): void {
    for (const items of this.#byTrace.values()) {
      this.#traces.push({
        resource: this.#resource,
        count: items.length,
        spans: () => this.#decode(items),
      });
    }
    this.#byTrace = new Map();
  }

  /**
   * What was read.
   *
   * @param caps The caps, for what they refused.
   * @returns The traces and the refusals.
   */
  result(caps: OtlpCaps): BoundedOtlp {
    this.close();
    return { traces: this.#traces, refused: caps.refusals() };
  }
}

/** The caps, and how far a request has used them. */
export class OtlpCaps {
  /** Most spans. */
  readonly spans: number;
  /** Most attributes over all spans. */
  readonly attributes: number;
  /** Most attributes on one span. */
  readonly perSpan: number;
  #spans = 0;
  #attributes = 0;
  #full = false;
  #refused = new Map<string, number>();

  /**
   * Caps for one request.
   *
   * @param limits The caps (defaults for those not given).
   */
  constructor(limits: OtlpLimits) {
    this.spans = limits.maxSpans ?? DEFAULT_MAX_OTLP_SPANS;
    this.attributes = limits.maxAttributes ?? DEFAULT_MAX_OTLP_ATTRIBUTES;
    this.perSpan = limits.maxSpanAttributes ??
      DEFAULT_MAX_OTLP_SPAN_ATTRIBUTES;
  }

  /**
   * Count a refused span.
   *
   * @param reason Why.
   */
  refuse(reason: string): void {
    this.#refused.set(reason, (this.#refused.get(reason) ?? 0) + 1);
  }

  /**
   * Take the next span of the request, or refuse it.
   *
   * @param attributes What it weighs; null when it is refused for `why`.
   * @param why Why it is refused.
   * @returns Whether it is taken.
   */
  take(attributes: number | null, why = ""): boolean {
    if (++this.#spans > this.spans) {
      this.refuse(`past the cap of ${this.spans} spans per request`);
    } else if (attributes === null) {
      this.refuse(why);
    } else if (this.#full || this.#attributes + attributes > this.attributes) {
      // Cut here: what is kept is the request's first spans, so a client
      // knows which to send again.
      this.#full = true;
      this.refuse(
        `past the cap of ${this.attributes} attributes per request`,
      );
    } else {
      this.#attributes += attributes;
      return true;
    }
    return false;
  }

  /**
   * What was refused, by reason.
   *
   * @returns The refusals.
   */
  refusals(): OtlpCapRefusal[] {
    return [...this.#refused].map(([reason, count]) => ({ reason, count }));
  }
}

/**
 * What a span (or resource, or scope) weighs, counted as it is walked:
 * attributes, protobuf fields, how deep arrays nest. The walk stops once
 * it is {@linkcode SpanWeight.over}.
 */
export class SpanWeight {
  /** Attributes, events and array elements. */
  attributes = 0;
  /** Protobuf fields. */
  fields = 0;
  /** Array depth where the walk is. */
  depth = 0;
  /** Deepest array depth seen. */
  deepest = 0;
  /** The span's trace id, lower-case hex (protobuf). */
  traceId = "";
  /** Most attributes. */
  readonly max: number;
  /** Most protobuf fields. */
  readonly maxFields: number;

  /**
   * Start weighing.
   *
   * @param max Most attributes (the per-span cap).
   */
  constructor(max: number) {
    this.max = max;
    this.maxFields = FIELDS_PER_ATTRIBUTE * max + 64;
  }

  /** Whether it is past a cap. */
  get over(): boolean {
    return this.attributes > this.max || this.fields > this.maxFields ||
      this.deepest > MAX_OTLP_ARRAY_DEPTH;
  }
  /**
   * Why it is over, in words that follow "with" or "has".
   *
   * @returns The reason.
   */
  why(): string {
    if (this.deepest > MAX_OTLP_ARRAY_DEPTH) {
      return `array values nested deeper than ${MAX_OTLP_ARRAY_DEPTH} levels`;
    }
    if (this.attributes > this.max) {
      return `more than ${this.max} attributes (the cap per span; events and array elements count)`;
    }
    return `more than ${this.maxFields} protobuf fields`;
  }
}

/**
 * Weigh a span as parsed from JSON: its attributes, events and their
 * attributes (array elements counted).
 *
 * @param span The span.
 * @param w Its weight so far.
 */
export function weighJsonSpan(span: OtlpSpan, w: SpanWeight): void {
  weighJsonAttributes(span?.attributes, w);
  for (const ev of Array.isArray(span?.events) ? span.events : []) {
    if (w.over) return;
    w.attributes++;
    weighJsonAttributes(ev?.attributes, w);
  }
}

/**
 * Weigh attributes as parsed from JSON (array elements counted).
 *
 * @param list The attributes (anything else weighs nothing).
 * @param w The weight so far.
 */
export function weighJsonAttributes(list: unknown, w: SpanWeight): void {
  if (!Array.isArray(list)) return;
  for (const a of list) {
    if (w.over) return;
    w.attributes++;
    weighJsonValue((a as { value?: unknown })?.value, w);
  }
}

/** A JSON `AnyValue`: its array's elements count as attributes. */
function weighJsonValue(v: unknown, w: SpanWeight): void {
  const values = (v as { arrayValue?: { values?: unknown } } | undefined)
    ?.arrayValue?.values;
  if (!Array.isArray(values)) return;
  w.deepest = Math.max(w.deepest, ++w.depth);
  for (const x of values) {
    if (w.over) break;
    w.attributes++;
    weighJsonValue(x, w);
  }
  w.depth--;
}
