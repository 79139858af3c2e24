/**
 * OTLP protobuf within caps, in steps: the request is walked here field
 * by field (lengths only, nothing allocated) and each span weighed before
 * it is decoded (the walk stops at its cap, so a span of 500,000
 * attributes costs as much as one at the cap). The spans kept are decoded
 * only when their trace is mapped, each alone by `decodeOtlpProtobuf`
 * (wrapped in a request of its own).
 *
 * @module
 */
import type { OtlpSpan } from "./otlp_types.ts";
import { decodeOtlpProtobuf, OtlpProtobufError } from "./protobuf_decode.ts";
import {
  type BoundedOtlp,
  type OtlpCaps,
  type Range,
  SpanWeight,
  TraceGroups,
} from "./bounded_caps.ts";

/** A walk over the fields of one message: the field last read. */
class Fields implements Range {
  field = 0;
  wire = 0;
  /** Content of the field last read (length-delimited), or where it ended. */
  start = 0;
  stop = 0;
  #at: number;
  readonly #end: number;

  constructor(
    readonly buf: Uint8Array,
    range: { start: number; stop: number },
  ) {
    this.#at = range.start;
    this.#end = range.stop;
  }

  #varint(): number {
    let value = 0;
    let scale = 1;
    for (let n = 0; n < 10 && this.#at < this.#end; n++) {
      const b = this.buf[this.#at++];
      value += (b & 0x7f) * scale;
      if (b < 0x80) return value;
      scale *= 128;
    }
    throw new OtlpProtobufError(
      "The protobuf body ends inside a number or has one longer than 64 bits; is it an OTLP ExportTraceServiceRequest?",
    );
  }

  /** Read the next field; false at the end. */
  next(): boolean {
    if (this.#at >= this.#end) return false;
    const key = this.#varint();
    this.field = Math.floor(key / 8);
    this.wire = key % 8;
    let size = 0;
    if (this.wire === 0) this.#varint();
    else if (this.wire === 1) size = 8;
    else if (this.wire === 5) size = 4;
    else if (this.wire === 2) size = this.#varint();
    else {
      throw new OtlpProtobufError(
        `The protobuf body has wire type ${this.wire} in field ${this.field}, which OTLP does not use; is it an OTLP ExportTraceServiceRequest?`,
      );
    }
    if (this.#at + size > this.#end) {
      throw new OtlpProtobufError(
        `The protobuf body is cut short in field ${this.field}; send the whole request`,
      );
    }
    this.start = this.#at;
    this.stop = this.#at += size;
    return true;
  }

  /** Whether the field last read is `field`, length-delimited. */
  is(field: number): boolean {
    return this.field === field && this.wire === 2;
  }

  /** The fields inside the field last read. */
  inner(): Fields {
    return new Fields(this.buf, this);
  }

  /** The field last read, kept. */
  range(): Range {
    return { buf: this.buf, start: this.start, stop: this.stop };
  }
}

/** Count the fields of a message, each passed to `descend`; stops when over. */
function walk(
  f: Fields,
  w: SpanWeight,
  descend?: (f: Fields, w: SpanWeight) => void,
): void {
  while (!w.over && f.next()) {
    w.fields++;
    descend?.(f, w);
  }
}

/** An `AnyValue`: its array's elements count as attributes. */
function anyValueField(v: Fields, w: SpanWeight): void {
  if (!v.is(5)) return;
  w.deepest = Math.max(w.deepest, ++w.depth);
  walk(v.inner(), w, arrayField);
  w.depth--;
}

function arrayField(a: Fields, w: SpanWeight): void {
  if (!a.is(1)) return;
  w.attributes++;
  walk(a.inner(), w, anyValueField);
}

function keyValueField(kv: Fields, w: SpanWeight): void {
  if (kv.is(2)) walk(kv.inner(), w, anyValueField);
}

/** An attribute (`KeyValue`) in field `field` of a message. */
function attributeIn(field: number) {
  return (f: Fields, w: SpanWeight): void => {
    if (!f.is(field)) return;
    w.attributes++;
    walk(f.inner(), w, keyValueField);
  };
}

const eventField = attributeIn(3);
const spanAttribute = attributeIn(9);
const resourceField = attributeIn(1);

/** A span's fields, as `decodeOtlpProtobuf` walks them. */
function spanField(s: Fields, w: SpanWeight): void {
  if (s.is(1)) w.traceId = hex(s);
  else if (s.is(9)) spanAttribute(s, w);
  else if (s.is(11)) {
    w.attributes++;
    walk(s.inner(), w, eventField);
  } else if (s.is(15)) walk(s.inner(), w);
}

function hex(r: Range): string {
  let out = "";
  for (let i = r.start; i < r.stop; i++) {
    out += r.buf[i].toString(16).padStart(2, "0");
  }
  return out;
}

/** `r`'s bytes as the only field of nested messages: `path` from outer to inner. */
function wrap(r: Range, path: number[]): Uint8Array {
  const varintSize = (n: number): number =>
    n < 128 ? 1 : 1 + varintSize(Math.floor(n / 128));
  const sizes: number[] = [];
  let size = r.stop - r.start;
  for (let i = path.length - 1; i >= 0; i--) {
    sizes[i] = size;
    size += varintSize(path[i] * 8 + 2) + varintSize(size);
  }
  const out = new Uint8Array(size);
  let at = 0;
  const put = (n: number) => {
    for (; n >= 128; n = Math.floor(n / 128)) out[at++] = (n % 128) | 0x80;
    out[at++] = n;
  };
  for (let i = 0; i < path.length; i++) {
    put(path[i] * 8 + 2);
    put(sizes[i]);
  }
  out.set(r.buf.subarray(r.start, r.stop), at);
  return out;
}

/** The last length-delimited field `field` of a message (as decoding keeps the last), or null. */
function* lastOf(f: Fields, field: number): Generator<void, Range | null> {
  let found: Range | null = null;
  for (let steps = 1; f.next(); steps++) {
    if (f.is(field)) found = f.range();
    if (steps % 1024 === 0) yield;
  }
  return found;
}

/** Weigh a resource or scope; the reason its spans are refused, or "". */
function overReason(
  r: Range,
  caps: OtlpCaps,
  what: string,
  descend?: (f: Fields, w: SpanWeight) => void,
): string {
  const w = new SpanWeight(caps.perSpan);
  walk(new Fields(r.buf, r), w, descend);
  return w.over ? `whose ${what} has ${w.why()}` : "";
}

/** Decode spans kept as their bytes, one a step. */
function* decodeSpans(ranges: Range[]): Generator<void, OtlpSpan[]> {
  const spans: OtlpSpan[] = [];
  for (const r of ranges) {
    spans.push(
      decodeOtlpProtobuf(wrap(r, [1, 2, 2])).resourceSpans[0].scopeSpans[0]
        .spans[0],
    );
    yield;
  }
  return spans;
}

/**
 * Read OTLP protobuf within caps, in steps.
 *
 * @param buf The body.
 * @param caps The caps, fresh for this request.
 * @returns The work; it returns the spans kept (by trace) and what the caps
 *   refused.
 * @throws {OtlpProtobufError} When the body is not well-formed protobuf.
 */
export function* protobufSteps(
  buf: Uint8Array,
  caps: OtlpCaps,
): Generator<void, BoundedOtlp> {
  const traces = new TraceGroups(decodeSpans);
  const top = new Fields(buf, { start: 0, stop: buf.length });
  while (top.next()) {
    if (!top.is(1)) continue;
    const resource = yield* lastOf(top.inner(), 1);
    const why = resource
      ? overReason(resource, caps, "resource", resourceField)
      : "";
    traces.open(
      resource && !why
        ? decodeOtlpProtobuf(wrap(resource, [1, 1])).resourceSpans[0].resource
        : { attributes: [] },
    );
    const scopes = top.inner();
    while (scopes.next()) {
      if (!scopes.is(2)) continue;
      // The scope is not mapped, only weighed (decoding walks it).
      const scope = yield* lastOf(scopes.inner(), 1);
      const scopeWhy = scope ? overReason(scope, caps, "scope") : "";
      const spans = scopes.inner();
      for (let steps = 1; spans.next(); steps++) {
        if (!spans.is(2)) continue;
        const w = new SpanWeight(caps.perSpan);
        let reason = why || scopeWhy;
        if (!reason) {
          walk(spans.inner(), w, spanField);
          if (w.over) reason = `with ${w.why()}`;
        }
        if (caps.take(reason ? null : w.attributes, reason)) {
          traces.add(w.traceId, spans.range());
        }
        if (steps % 256 === 0) yield;
      }
    }
  }
  return traces.result(caps);
}
