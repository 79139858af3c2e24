/**
 * The loopback ingest server: request handling, redaction, the active capture.
 *
 * @module
 */
export {
  createIngestHandler,
  DEFAULT_CAPTURE_ID,
  type IngestHandlerOptions,
  type IngestStats,
} from "./handler.ts";
export {
  DEFAULT_REDACTION_RULES,
  parseRedactionRules,
  type RedactionCounts,
  type RedactionRule,
  redactValue,
  SECRET_KEY_PATTERN,
} from "./redact.ts";
export { PayloadTooLargeError } from "./errors.ts";
export { fromRequest, toResponse } from "./exchange.ts";
export type {
  ConnectionStats,
  IngestAnswer,
  IngestRequest,
} from "./http1/mod.ts";
export { DEFAULT_MAX_BODY_BYTES } from "./body.ts";
export {
  ACTIVE_CAPTURE_FILE,
  readActiveCapture,
  writeActiveCapture,
} from "../store/active_capture.ts";
export {
  DEFAULT_HOST,
  DEFAULT_PORT,
  IngestConfigError,
  IngestServer,
  type IngestServerOptions,
  isLoopback,
} from "./server.ts";
