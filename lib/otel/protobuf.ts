/**
 * OTLP/HTTP protobuf for traces: {@linkcode encodeOtlpProtobuf} writes an
 * `ExportTraceServiceRequest` (opentelemetry-proto
 * `collector/trace/v1/trace_service.proto`) from the JSON mapping that
 * {@linkcode captureToOtlp} builds, and {@linkcode decodeOtlpProtobuf}
 * reads one back into that mapping (hex ids, nanosecond strings), so
 * `import --format otlp` takes `.pb` files too. Only the fields harness
 * writes or reads are handled; unknown fields are skipped, as protobuf
 * requires. The field numbers are the proto files'; the test decodes what
 * this writes with code generated from them.
 *
 * @module
 */
import type {
  OtlpAnyValue,
  OtlpAttribute,
  OtlpSpan,
  OtlpTraces,
} from "./otlp_types.ts";

/** A protobuf body that cannot be read as an OTLP trace request. */
export class OtlpProtobufError extends Error {
  /**
   * Create the error.
   *
   * @param message What is wrong and what to do.
   */
  constructor(message: string) {
    super(message);
    this.name = "OtlpProtobufError";
  }
}

const utf8 = new TextEncoder();
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * One growing buffer; a nested message or a string is written in place
 * after room for its length, and moved back once its length is known.
 */
class Writer {
  #buf: Uint8Array<ArrayBuffer> = new Uint8Array(1 << 16);
  #view = new DataView(this.#buf.buffer);
  #len = 0;

  #room(n: number): void {
    if (this.#len + n <= this.#buf.length) return;
    let size = this.#buf.length * 2;
    while (size < this.#len + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.#buf.subarray(0, this.#len));
    this.#buf = next;
    this.#view = new DataView(next.buffer);
  }

  /** A signed 64-bit integer (two's complement for negatives). */
  int64(v: string): void {
    const n = Number(v);
    if (Number.isSafeInteger(n) && n >= 0) {
      this.uint(n);
      return;
    }
    let big = BigInt.asUintN(64, BigInt(v));
    this.#room(10);
    while (big >= 0x80n) {
      this.#buf[this.#len++] = Number(big & 0x7fn) | 0x80;
      big >>= 7n;
    }
    this.#buf[this.#len++] = Number(big);
  }

  /** An unsigned varint of a safe integer. */
  uint(v: number): void {
    this.#room(10);
    while (v >= 0x80) {
      this.#buf[this.#len++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.#buf[this.#len++] = v;
  }

  tag(field: number, wire: number): void {
    this.uint((field << 3) | wire);
  }

  /** Field, then `fill` written after room for a length, then the length. */
  #delimited(field: number, fill: () => void): void {
    this.tag(field, 2);
    this.#room(5);
    const at = this.#len;
    this.#len += 5;
    fill();
    const size = this.#len - at - 5;
    let n = 1;
    while (size >= 2 ** (7 * n)) n++;
    if (n < 5) this.#buf.copyWithin(at + n, at + 5, this.#len);
    this.#len -= 5 - n;
    let v = size;
    for (let i = 0; i < n; i++) {
      this.#buf[at + i] = (v % 0x80) | (i < n - 1 ? 0x80 : 0);
      v = Math.floor(v / 0x80);
    }
  }

  hex(field: number, hex: string): void {
    this.#delimited(field, () => {
      const n = hex.length >> 1;
      this.#room(n);
      for (let i = 0; i < n; i++) {
        this.#buf[this.#len++] = (HEX[hex.charCodeAt(2 * i)] << 4) |
          HEX[hex.charCodeAt(2 * i + 1)];
      }
    });
  }

  string(field: number, s: string): void {
    this.#delimited(field, () => {
      this.#room(s.length * 3);
      const r = utf8.encodeInto(s, this.#buf.subarray(this.#len));
      this.#len += r.written;
    });
  }

  fixed64(field: number, v: string): void {
    this.tag(field, 1);
    this.#room(8);
    this.#view.setBigUint64(this.#len, BigInt(v), true);
    this.#len += 8;
  }

  double(field: number, v: number): void {
    this.tag(field, 1);
    this.#room(8);
    this.#view.setFloat64(this.#len, v, true);
    this.#len += 8;
  }

  message(field: number, fill: (w: Writer) => void): void {
    this.#delimited(field, () => fill(this));
  }

  finish(): Uint8Array<ArrayBuffer> {
    return this.#buf.slice(0, this.#len);
  }
}

/** Hex digit values by character code. */
const HEX = (() => {
  const t = new Uint8Array(128);
  for (let i = 0; i < 16; i++) {
    t["0123456789abcdef".charCodeAt(i)] = i;
    t["0123456789ABCDEF".charCodeAt(i)] = i;
  }
  return t;
})();

function writeAnyValue(v: Writer, value: Record<string, unknown>): void {
  if ("stringValue" in value) v.string(1, String(value.stringValue));
  else if ("boolValue" in value) {
    v.tag(2, 0);
    v.uint(value.boolValue ? 1 : 0);
  } else if ("intValue" in value) {
    v.tag(3, 0);
    v.int64(String(value.intValue));
  } else if ("doubleValue" in value) {
    v.double(4, Number(value.doubleValue));
  } else if ("arrayValue" in value) {
    const list = (value.arrayValue as { values?: unknown[] }).values ?? [];
    v.message(5, (a) => {
      for (const item of list) {
        a.message(1, (x) => writeAnyValue(x, item as Record<string, unknown>));
      }
    });
  }
}

function writeAttribute(w: Writer, a: OtlpAttribute): void {
  w.string(1, a.key);
  w.message(2, (v) => writeAnyValue(v, a.value as Record<string, unknown>));
}

function writeSpan(w: Writer, s: OtlpSpan): void {
  w.hex(1, s.traceId);
  w.hex(2, s.spanId);
  if (s.parentSpanId) w.hex(4, s.parentSpanId);
  w.string(5, s.name);
  if (s.kind) {
    w.tag(6, 0);
    w.uint(s.kind);
  }
  w.fixed64(7, s.startTimeUnixNano);
  w.fixed64(8, s.endTimeUnixNano);
  for (const a of s.attributes) w.message(9, (k) => writeAttribute(k, a));
  for (const e of s.events ?? []) {
    w.message(11, (m) => {
      m.fixed64(1, e.timeUnixNano);
      m.string(2, e.name);
      for (const a of e.attributes) m.message(3, (k) => writeAttribute(k, a));
    });
  }
  w.message(15, (m) => {
    if (s.status.message) m.string(2, s.status.message);
    if (s.status.code) {
      m.tag(3, 0);
      m.uint(s.status.code);
    }
  });
}

/**
 * Encode an export request as OTLP protobuf
 * (`Content-Type: application/x-protobuf`).
 *
 * @param traces The request in the JSON mapping.
 * @returns The protobuf bytes.
 */
export function encodeOtlpProtobuf(
  traces: OtlpTraces,
): Uint8Array<ArrayBuffer> {
  const w = new Writer();
  for (const rs of traces.resourceSpans) {
    w.message(1, (r) => {
      r.message(1, (res) => {
        for (const a of rs.resource.attributes) {
          res.message(1, (k) => writeAttribute(k, a));
        }
      });
      for (const ss of rs.scopeSpans) {
        r.message(2, (sc) => {
          sc.message(1, (m) => {
            m.string(1, ss.scope.name);
            m.string(2, ss.scope.version);
          });
          for (const s of ss.spans) sc.message(2, (m) => writeSpan(m, s));
        });
      }
    });
  }
  return w.finish();
}

/** One field read off the wire. */
interface Field {
  field: number;
  wire: number;
  /** Varint or fixed value. */
  num: bigint;
  /** Length-delimited content. */
  data: Uint8Array;
}

function fields(buf: Uint8Array): Field[] {
  const out: Field[] = [];
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  let i = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (i >= buf.length || shift > 63n) {
        throw new OtlpProtobufError(
          "The protobuf body ends inside a number or has one longer than 64 bits; is it an OTLP ExportTraceServiceRequest?",
        );
      }
      const b = buf[i++];
      result |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) return result;
      shift += 7n;
    }
  };
  while (i < buf.length) {
    const key = Number(varint());
    const field = key >>> 3;
    const wire = key & 7;
    const need = (n: number) => {
      if (i + n > buf.length) {
        throw new OtlpProtobufError(
          `The protobuf body is cut short in field ${field}; send the whole request`,
        );
      }
    };
    if (wire === 0) out.push({ field, wire, num: varint(), data: buf });
    else if (wire === 1) {
      need(8);
      out.push({ field, wire, num: view.getBigUint64(i, true), data: buf });
      i += 8;
    } else if (wire === 2) {
      const n = Number(varint());
      need(n);
      out.push({ field, wire, num: 0n, data: buf.subarray(i, i + n) });
      i += n;
    } else if (wire === 5) {
      need(4);
      out.push({
        field,
        wire,
        num: BigInt(view.getUint32(i, true)),
        data: buf,
      });
      i += 4;
    } else {
      throw new OtlpProtobufError(
        `The protobuf body has wire type ${wire} in field ${field}, which OTLP does not use; is it an OTLP ExportTraceServiceRequest?`,
      );
    }
  }
  return out;
}

function text(data: Uint8Array): string {
  try {
    return strictUtf8.decode(data);
  } catch {
    throw new OtlpProtobufError("A protobuf string is not valid UTF-8");
  }
}

function hex(data: Uint8Array): string {
  let s = "";
  for (const b of data) s += b.toString(16).padStart(2, "0");
  return s;
}

function readAnyValue(data: Uint8Array): OtlpAnyValue | null {
  let value: OtlpAnyValue | null = null;
  for (const v of fields(data)) {
    if (v.field === 1 && v.wire === 2) {
      value = { stringValue: text(v.data) };
    } else if (v.field === 2 && v.wire === 0) {
      value = { boolValue: v.num !== 0n };
    } else if (v.field === 3 && v.wire === 0) {
      value = { intValue: BigInt.asIntN(64, v.num).toString() };
    } else if (v.field === 4 && v.wire === 1) {
      const b = new DataView(new ArrayBuffer(8));
      b.setBigUint64(0, v.num, true);
      value = { doubleValue: b.getFloat64(0, true) };
    } else if (v.field === 5 && v.wire === 2) {
      const values: OtlpAnyValue[] = [];
      for (const item of fields(v.data)) {
        if (item.field !== 1 || item.wire !== 2) continue;
        const one = readAnyValue(item.data);
        if (one) values.push(one);
      }
      value = { arrayValue: { values } };
    }
  }
  return value;
}

function readAttribute(data: Uint8Array): OtlpAttribute | null {
  let key = "";
  let value: OtlpAnyValue | null = null;
  for (const f of fields(data)) {
    if (f.field === 1 && f.wire === 2) key = text(f.data);
    if (f.field === 2 && f.wire === 2) value = readAnyValue(f.data);
  }
  return value ? { key, value } : null;
}

function readAttributes(list: Field[], field: number): OtlpAttribute[] {
  const out: OtlpAttribute[] = [];
  for (const f of list) {
    if (f.field !== field || f.wire !== 2) continue;
    const a = readAttribute(f.data);
    if (a) out.push(a);
  }
  return out;
}

function readSpan(data: Uint8Array): OtlpSpan {
  const fs = fields(data);
  const span: OtlpSpan = {
    traceId: "",
    spanId: "",
    name: "",
    kind: 0,
    startTimeUnixNano: "0",
    endTimeUnixNano: "0",
    attributes: readAttributes(fs, 9),
    status: { code: 0 },
  };
  for (const f of fs) {
    if (f.field === 1 && f.wire === 2) span.traceId = hex(f.data);
    else if (f.field === 2 && f.wire === 2) span.spanId = hex(f.data);
    else if (f.field === 4 && f.wire === 2 && f.data.length) {
      span.parentSpanId = hex(f.data);
    } else if (f.field === 5 && f.wire === 2) span.name = text(f.data);
    else if (f.field === 6 && f.wire === 0) span.kind = Number(f.num);
    else if (f.field === 7 && f.wire === 1) {
      span.startTimeUnixNano = f.num.toString();
    } else if (f.field === 8 && f.wire === 1) {
      span.endTimeUnixNano = f.num.toString();
    } else if (f.field === 11 && f.wire === 2) {
      const ef = fields(f.data);
      let time = "0";
      let name = "";
      for (const e of ef) {
        if (e.field === 1 && e.wire === 1) time = e.num.toString();
        if (e.field === 2 && e.wire === 2) name = text(e.data);
      }
      (span.events ??= []).push({
        timeUnixNano: time,
        name,
        attributes: readAttributes(ef, 3),
      });
    } else if (f.field === 15 && f.wire === 2) {
      for (const s of fields(f.data)) {
        if (s.field === 2 && s.wire === 2) span.status.message = text(s.data);
        if (s.field === 3 && s.wire === 0) span.status.code = Number(s.num);
      }
    }
  }
  return span;
}

/**
 * Decode an OTLP protobuf `ExportTraceServiceRequest` into the JSON mapping.
 *
 * @param bytes The request body or file.
 * @returns The request (hex ids, nanosecond strings).
 * @throws {OtlpProtobufError} When the bytes are not a well-formed request.
 */
export function decodeOtlpProtobuf(bytes: Uint8Array): OtlpTraces {
  const traces: OtlpTraces = { resourceSpans: [] };
  for (const rsf of fields(bytes)) {
    if (rsf.field !== 1 || rsf.wire !== 2) continue;
    const rs: OtlpTraces["resourceSpans"][number] = {
      resource: { attributes: [] },
      scopeSpans: [],
    };
    for (const f of fields(rsf.data)) {
      if (f.field === 1 && f.wire === 2) {
        rs.resource.attributes = readAttributes(fields(f.data), 1);
      } else if (f.field === 2 && f.wire === 2) {
        const scope = { name: "", version: "" };
        const spans: OtlpSpan[] = [];
        for (const s of fields(f.data)) {
          if (s.field === 1 && s.wire === 2) {
            for (const m of fields(s.data)) {
              if (m.field === 1 && m.wire === 2) scope.name = text(m.data);
              if (m.field === 2 && m.wire === 2) scope.version = text(m.data);
            }
          } else if (s.field === 2 && s.wire === 2) {
            spans.push(readSpan(s.data));
          }
        }
        rs.scopeSpans.push({ scope, spans });
      }
    }
    traces.resourceSpans.push(rs);
  }
  return traces;
}
