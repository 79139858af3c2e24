/**
 * One OTLP span of 500,000 attributes beside a small one, posted to a real
 * `ingest.ts serve` process (issue 35, item 3: it once took 7.4 s). The
 * intake refuses the wide span by its attribute cap without walking it; this
 * times the answer. The test (`tests/otel/otlp_hostile_test.ts`) checks what
 * is refused and stored; the time is measured here, not in a timed test.
 *
 * @module
 */
import { startServeProcess } from "./_reliability.ts";
import { partialSuccessOf } from "./_otlp_hostile.ts";
import { encodeOtlpProtobuf } from "../lib/otel/protobuf_encode.ts";
import type { OtlpSpan } from "../lib/otel/otlp_types.ts";

/** What the wide span's request found. */
export interface WideSpanReport {
  /** Body bytes sent. */
  bytes: number;
  /** The answer's status and partial success. */
  status: number;
  rejected: number;
  message: string;
  /** From the request to its whole answer, in ms. */
  ms: number;
}

/** A tool span with `attributes` attributes (two of them GenAI's). */
function toolSpan(i: number, attributes: number): OtlpSpan {
  const list = [
    { key: "gen_ai.operation.name", value: { stringValue: "execute_tool" } },
    { key: "gen_ai.tool.name", value: { stringValue: "lookup" } },
  ];
  while (list.length < attributes) {
    list.push({ key: "a", value: { stringValue: "" } });
  }
  const id = (n: number, digits: number) =>
    (n + 1).toString(16).padStart(digits, "0");
  return {
    traceId: id(i, 32),
    spanId: id(i, 16),
    name: "execute_tool lookup",
    kind: 1,
    startTimeUnixNano: "1700000000000000000",
    endTimeUnixNano: "1700000001000000000",
    attributes: list,
    status: { code: 1 },
  };
}

/**
 * Post one span of `attributes` attributes and one of 3 to a serve process
 * on a fresh store, and time the answer.
 *
 * @param root An empty folder for the store.
 * @param attributes The wide span's attributes. @default 500_000
 * @returns What was found.
 */
export async function otlpWideSpan(
  root: string,
  attributes = 500_000,
): Promise<WideSpanReport> {
  const body = encodeOtlpProtobuf({
    resourceSpans: [{
      resource: { attributes: [] },
      scopeSpans: [{
        scope: { name: "wide", version: "1" },
        spans: [toolSpan(0, attributes), toolSpan(1, 3)],
      }],
    }],
  });
  const { child, url } = await startServeProcess(root);
  try {
    const t0 = performance.now();
    const res = await fetch(`${url}/v1/traces`, {
      method: "POST",
      headers: {
        "content-type": "application/x-protobuf",
        "x-harness-capture": "wide",
      },
      body: body as Uint8Array<ArrayBuffer>,
    });
    const answer = partialSuccessOf(new Uint8Array(await res.arrayBuffer()));
    return {
      bytes: body.length,
      status: res.status,
      ...answer,
      ms: Math.round(performance.now() - t0),
    };
  } finally {
    child.kill("SIGKILL");
    await child.status;
  }
}
