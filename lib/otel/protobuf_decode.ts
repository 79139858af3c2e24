/**
 * OTLP/HTTP protobuf in: {@linkcode decodeOtlpProtobuf} reads an
 * `ExportTraceServiceRequest` (opentelemetry-proto
 * `collector/trace/v1/trace_service.proto`) into the JSON mapping
 * (hex ids, nanosecond strings), so `import --format otlp` and the intake
 * take protobuf too. Only the fields harness reads are handled; unknown
 * fields are skipped, as protobuf requires. Writing is
 * `protobuf_encode.ts`.
 *
 * @module
 */
import type {
  OtlpAnyValue,
  OtlpAttribute,
  OtlpSpan,
  OtlpTraces,
} from "./otlp_types.ts";
import { MAX_OTLP_ARRAY_DEPTH } from "./bounded_caps.ts";

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

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

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

function readAnyValue(data: Uint8Array, depth = 0): OtlpAnyValue | null {
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
      if (depth >= MAX_OTLP_ARRAY_DEPTH) {
        throw new OtlpProtobufError(
          `An attribute value nests arrays deeper than ${MAX_OTLP_ARRAY_DEPTH} levels, the limit: flatten it`,
        );
      }
      const values: OtlpAnyValue[] = [];
      for (const item of fields(v.data)) {
        if (item.field !== 1 || item.wire !== 2) continue;
        const one = readAnyValue(item.data, depth + 1);
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
