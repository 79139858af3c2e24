/**
 * The loopback ingest server: {@linkcode IngestServer} (our own HTTP/1.1
 * listener, its options and defaults), the same routes as a fetch handler
 * ({@linkcode createIngestHandler} with {@linkcode fromRequest} and
 * {@linkcode toResponse}), its route table ({@linkcode RouteTable}), the one
 * function from errors to answers ({@linkcode errorAnswer}), the base of the
 * errors that carry their status ({@linkcode HttpError}) and the refusals it
 * throws, the body limit, and redaction of secrets before sealing. The active capture pointer is the store's (`./store`).
 *
 * @module
 */
export {
  DEFAULT_HOST,
  DEFAULT_PORT,
  IngestConfigError,
  IngestServer,
  type IngestServerOptions,
} from "./server.ts";
export { createIngestHandler, type IngestHandler } from "./handler.ts";
export {
  DEFAULT_CAPTURE_ID,
  type HandlerContext,
  type IngestHandlerOptions,
  type IngestStats,
} from "./handler_types.ts";
export {
  type Resolved,
  type Route,
  type RouteAuth,
  type RouteBody,
  type RouteFamily,
  type RouteMatch,
  RouteTable,
} from "./route_table.ts";
export type { OtlpIntakeStats } from "./otlp_intake.ts";
export {
  errorAnswer,
  errorHeaders,
  type ErrorShape,
  httpErrorOf,
  statusOf,
} from "./error_answer.ts";
export {
  HttpError,
  type HttpErrorOptions,
} from "../model_gateway/http_error.ts";
export {
  ForbiddenRequestError,
  MethodNotAllowedError,
  RouteNotFoundError,
  ServerBusyError,
  UnauthorizedError,
  UnsupportedMediaTypeError,
} from "./refusals.ts";
export type {
  AnswerPieces,
  ConnectionStats,
  IngestAnswer,
  IngestRequest,
} from "./http1/mod.ts";
export { fromRequest, toResponse } from "./exchange.ts";
export { PayloadTooLargeError } from "./payload_too_large.ts";
export { DEFAULT_MAX_BODY_BYTES } from "./body.ts";
export {
  type CleanStrings,
  DEFAULT_REDACTION_RULES,
  parseRedactionRules,
  type RedactionCounts,
  type RedactionRule,
  type RedactionSet,
  redactionSet,
  redactValue,
} from "../trace/redact.ts";
