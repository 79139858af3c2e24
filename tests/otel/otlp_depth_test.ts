/**
 * Deep values in OTLP files (issue 35, item 13): arrays 10,000 levels deep
 * (JSON or protobuf) and tool arguments 20,000 levels deep gave "Maximum
 * call stack size exceeded"; they are an `ImportError` naming the limit.
 */
import { assertMatch, assertOk, assertThrows } from "../_assert.ts";
import { convertOtlp } from "../../lib/otel/import.ts";
import { ImportError } from "../../lib/importers/import_error.ts";

const TRACE = "0af7651916cd43dd8448eb211c80319c";
const SPAN = "b7ad6b7169203331";

/** One tool span with `extra` (JSON text of one attribute) in OTLP JSON. */
function jsonFile(extra: string): string {
  return `{"resourceSpans":[{"resource":{"attributes":[]},"scopeSpans":[{"scope":{"name":"t"},"spans":[{"traceId":"${TRACE}","spanId":"${SPAN}","name":"execute_tool get_order","kind":1,"startTimeUnixNano":"1700000000000000000","endTimeUnixNano":"1700000001000000000","attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"execute_tool"}},{"key":"gen_ai.tool.name","value":{"stringValue":"get_order"}},${extra}]}]}]}]}`;
}

function varint(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const b = n & 0x7f;
    n = Math.floor(n / 128);
    if (n === 0) return [...out, b];
    out.push(b | 0x80);
  }
}

/** A length-delimited protobuf field. */
function field(n: number, payload: Uint8Array): Uint8Array {
  const head = Uint8Array.from([
    ...varint((n << 3) | 2),
    ...varint(payload.length),
  ]);
  return concat(head, payload);
}

const bytes = (text: string) => new TextEncoder().encode(text);
const fromHex = (h: string) =>
  Uint8Array.from(h.match(/../g)!.map((b) => parseInt(b, 16)));

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

Deno.test("convertOtlp() refuses JSON attribute arrays 10,000 levels deep naming the depth limit", () => {
  const n = 10_000;
  const deep = '{"arrayValue":{"values":['.repeat(n) + '{"stringValue":"x"}' +
    "]}}".repeat(n);
  const err = assertThrows(
    () =>
      convertOtlp(jsonFile(`{"key":"deep","value":${deep}}`), {
        captureId: "otlp",
      }),
    ImportError,
  );
  assertMatch(
    err.message,
    /attribute "deep": arrays nested deeper than 32 levels/,
  );
});

Deno.test("convertOtlp() refuses protobuf attribute arrays 10,000 levels deep naming the depth limit", () => {
  // AnyValue{array_value(5): ArrayValue{values(1): AnyValue}} …
  let value = field(1, bytes("x"));
  for (let i = 0; i < 10_000; i++) value = field(5, field(1, value));
  const span = concat(
    field(1, fromHex(TRACE)),
    field(2, fromHex(SPAN)),
    field(5, bytes("execute_tool get_order")),
    field(
      9,
      concat(
        field(1, bytes("gen_ai.tool.name")),
        field(2, field(1, bytes("get_order"))),
      ),
    ),
    field(9, concat(field(1, bytes("deep")), field(2, value))),
  );
  const request = field(1, field(2, field(2, span)));
  const err = assertThrows(
    () => convertOtlp(request, { captureId: "otlp" }),
    ImportError,
  );
  assertMatch(err.message, /nests arrays deeper than 32 levels, the limit/);
  assertOk(!/call stack/.test(err.message), err.message);
});

Deno.test("convertOtlp() refuses tool arguments 20,000 levels deep naming the depth limit", () => {
  const args = '{"a":'.repeat(20_000) + "1" + "}".repeat(20_000);
  const err = assertThrows(
    () =>
      convertOtlp(
        jsonFile(
          `{"key":"gen_ai.tool.call.arguments","value":{"stringValue":${
            JSON.stringify(args)
          }}}`,
        ),
        { captureId: "otlp" },
      ),
    ImportError,
  );
  assertMatch(
    err.message,
    /tool\.call\.started payload\.arguments\.a\..*nested deeper than the limit of 64 levels/,
  );
});
