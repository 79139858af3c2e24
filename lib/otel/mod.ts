/**
 * OpenTelemetry: a capture as OTLP/HTTP traces after the GenAI semantic
 * conventions (export, send, and live streaming behind a durable cursor),
 * OTLP protobuf encoding and decoding, and OTLP traces from agents
 * instrumented with the GenAI conventions, OpenInference or OpenLLMetry
 * into capture episodes (import).
 *
 * This face is what a user needs; the mechanism (the span builder, the
 * intake's per-span mapping, batching) is imported from the files that
 * implement it.
 *
 * @example Export a capture's events
 * ```ts
 * import { captureToOtlp } from "./mod.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const traces = captureToOtlp("cap_1", []);
 * strictEqual(traces.resourceSpans[0].scopeSpans[0].spans.length, 0);
 * ```
 *
 * @module
 */
export type {
  OtlpAnyValue,
  OtlpAttribute,
  OtlpSpan,
  OtlpSpanEvent,
  OtlpTraces,
} from "./otlp_types.ts";
export { captureToOtlp, type OtlpExportOptions } from "./export.ts";
export {
  type OtlpProtocol,
  OtlpSendError,
  type OtlpSendOptions,
  type OtlpSendReport,
  sendOtlp,
} from "./send.ts";
export { OtlpStreamer } from "./stream.ts";
export type {
  OtlpStreamerOptions,
  OtlpStreamStatus,
} from "./stream_options.ts";
export { encodeOtlpProtobuf } from "./protobuf_encode.ts";
export { decodeOtlpProtobuf, OtlpProtobufError } from "./protobuf_decode.ts";
export { convertOtlp, parseOtlp } from "./import.ts";
