/**
 * OTLP/HTTP protobuf out: {@linkcode encodeOtlpProtobuf} writes an
 * `ExportTraceServiceRequest` (opentelemetry-proto
 * `collector/trace/v1/trace_service.proto`) from the JSON mapping that
 * {@linkcode captureToOtlp} builds. Only the fields harness writes are
 * handled. The field numbers are the proto files'; the test decodes what
 * this writes with code generated from them. Reading is
 * `protobuf_decode.ts`.
 *
 * @module
 */
import type { OtlpAttribute, OtlpSpan, OtlpTraces } from "./otlp_types.ts";

const utf8 = new TextEncoder();

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
