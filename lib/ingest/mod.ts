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
export {
  fromRequest,
  type IngestAnswer,
  type IngestRequest,
  toResponse,
} from "./exchange.ts";
export type { ConnectionStats } from "./http1_server.ts";
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
