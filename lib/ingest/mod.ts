/**
 * The loopback ingest server: {@linkcode IngestServer} (our own HTTP/1.1
 * listener, its options and defaults), the same routes as a fetch handler
 * ({@linkcode createIngestHandler} with {@linkcode fromRequest} and
 * {@linkcode toResponse}), the body limit, and redaction of secrets before
 * sealing. The active capture pointer is the store's (`./store`).
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
export {
  createIngestHandler,
  DEFAULT_CAPTURE_ID,
  type IngestHandlerOptions,
  type IngestStats,
} from "./handler.ts";
export type {
  ConnectionStats,
  IngestAnswer,
  IngestRequest,
} from "./http1/mod.ts";
export { fromRequest, toResponse } from "./exchange.ts";
export { PayloadTooLargeError } from "./errors.ts";
export { DEFAULT_MAX_BODY_BYTES } from "./body.ts";
export {
  DEFAULT_REDACTION_RULES,
  parseRedactionRules,
  type RedactionCounts,
  type RedactionRule,
  redactValue,
} from "../trace/redact.ts";
