/**
 * OpenTelemetry: a capture as OTLP/HTTP JSON traces after the GenAI
 * semantic conventions (export and send), and OTLP traces from agents
 * instrumented with the GenAI conventions, OpenInference or OpenLLMetry
 * into capture episodes (import).
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
export {
  captureToOtlp,
  derivedId,
  type OtlpAnyValue,
  type OtlpAttribute,
  type OtlpExportOptions,
  otlpRequest,
  type OtlpSpan,
  OtlpSpanBuilder,
  type OtlpSpanBuilderOptions,
  type OtlpSpanEvent,
  type OtlpTraces,
} from "./export.ts";
export {
  convertOtlp,
  mapOtlp,
  type MapOtlpOptions,
  type MapOtlpResult,
  type OtlpRejection,
  parseOtlp,
} from "./import.ts";
export {
  batchTraces,
  type OtlpProtocol,
  OtlpSendError,
  type OtlpSendOptions,
  type OtlpSendReport,
  otlpTracesUrl,
  sendOtlp,
} from "./send.ts";
export {
  decodeOtlpProtobuf,
  encodeOtlpProtobuf,
  OtlpProtobufError,
} from "./protobuf.ts";
export {
  OtlpStreamer,
  type OtlpStreamerOptions,
  type OtlpStreamStatus,
} from "./stream.ts";
