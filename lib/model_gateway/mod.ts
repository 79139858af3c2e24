/**
 * The model gateway: the ingest server's model API routes (the wires),
 * which forward each request to its upstream, relay the answer (streams
 * chunk by chunk) and record the exchange as canonical events. Not to be
 * confused with `lib/tool_gateway/` (the tool gateway, `ToolGateway`).
 *
 * @module
 */
export { ModelGateway, splitModelRoute } from "./gateway.ts";
export type {
  Narrowing,
  Refusal,
  ServedCall,
  ServedPackage,
  ServingDecision,
} from "./serving.ts";
export { WireShapeError } from "./wire_types.ts";
export type {
  NormMessage,
  NormRequest,
  NormResponse,
  NormToolCall,
  NormToolResult,
  NormUsage,
  Wire,
} from "./wire_types.ts";
export type { GatewayRequest } from "./gateway_request.ts";
export type { AnswerPieces, GatewayAnswer } from "./api_errors.ts";
export { GatewayError, type GatewayErrorCode } from "./gateway_error.ts";
export { HttpError, type HttpErrorOptions } from "./http_error.ts";
export type {
  HookJoin,
  WireError,
  WireErrorAnswer,
  WireKey,
  WirePath,
  WireRoute,
  WireSpec,
  WireUpstream,
} from "./wires/wire_spec.ts";
export type { StreamAccumulator, WireReader } from "./wire_types.ts";
export type {
  Obj,
  OwnAnswer,
  WireWriter,
  WrittenAnswer,
} from "./wire_writers.ts";
export { UPSTREAMS, WIRE_SPECS } from "./wires/registry.ts";
export {
  DEFAULT_UPSTREAM_ANTHROPIC,
  DEFAULT_UPSTREAM_OPENAI,
  DEFAULT_UPSTREAM_TIMEOUT_MS,
} from "./options.ts";
export type {
  ModelGatewayContext,
  ModelGatewayOptions,
  ModelGatewayStats,
} from "./options.ts";
export { GATEWAY_SOURCE } from "./recorder.ts";
export {
  filledBody,
  RecordedBodyError,
  REPEATED_FIELD_MIN_CHARS,
} from "./recorded_body.ts";
export { ANSWER_HEADERS } from "./answer_headers.ts";
