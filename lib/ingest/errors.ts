/**
 * The one place that maps errors to HTTP answers, for every route of the
 * ingest server: {@linkcode statusOf} gives an error's status (by its
 * type), {@linkcode errorAnswer} its answer in the shape of the route's
 * family.
 *
 * | error | status |
 * | --- | --- |
 * | `HttpProtocolError` (the listener: malformed, over a limit, late) | its own |
 * | `SyntaxError`, `URIError` (not JSON, not UTF-8, not OTLP) | 400 |
 * | `UnauthorizedError` (the server's token) | 401 |
 * | `ForbiddenRequestError` (Origin, Host, admin key) | 403 |
 * | `RouteNotFoundError`, `CaptureNotFoundError` | 404 |
 * | `MethodNotAllowedError` | 405 |
 * | `CaptureFinishedError`, `ImportRepeatError` | 409 |
 * | `PayloadTooLargeError` | 413 |
 * | `UnsupportedMediaTypeError` | 415 |
 * | `EventShapeError`, `InvalidIdError`, `HookPayloadError` | 422 |
 * | `ServerBusyError` | 503 |
 * | `StoreFullError` (the disk is full; what was acknowledged is kept) | 507 |
 * | anything else (`SpoolError` included: the store failed) | 500 |
 *
 * | family | body |
 * | --- | --- |
 * | `control` (`/ingest`, `/captures`, `/capture/…`, `/health`, `/admin/…`) | `{ok: false, error}` |
 * | `hook` | `{ok: false, error}`; once read, HTTP 200 (for 400, 409, 422, 500, 507): a host never sees capture fail |
 * | `otlp` | OTLP's `Status` as JSON (`{code, message}`), beside `{ok: false, error}` |
 * | `model` | the API's own error (`lib/model_gateway/api_errors.ts`) |
 *
 * @module
 */
import { StoreFullError } from "../store/store_full.ts";
import { EventShapeError } from "../trace/validate.ts";
import { InvalidIdError } from "../trace/ids.ts";
import { HookPayloadError } from "../adapters/common.ts";
import { CaptureNotFoundError } from "../store/inspect.ts";
import { CaptureFinishedError } from "../store/sink.ts";
import { ImportRepeatError } from "../importers/import_repeat.ts";
import { SpoolError } from "../store/spool.ts";
import { apiError } from "../model_gateway/api_errors.ts";
import type { WireSpec } from "../model_gateway/wires/wire_spec.ts";
import type { IngestAnswer } from "./http1/mod.ts";
import { PayloadTooLargeError } from "./payload_too_large.ts";
import { HttpProtocolError } from "./http1/_errors.ts";
import {
  ForbiddenRequestError,
  MethodNotAllowedError,
  RouteNotFoundError,
  ServerBusyError,
  UnauthorizedError,
  UnsupportedMediaTypeError,
} from "./refusals.ts";

/**
 * Which shape a route's error answers take: the server's own (`control`),
 * the hooks' (`hook`), OTLP's (`otlp`), or a model API's (`model`, with
 * the API the client speaks).
 */
export type ErrorShape =
  | { family: "control" | "hook" | "otlp" }
  | { family: "model"; api: WireSpec };

/**
 * A JSON answer.
 *
 * @param status HTTP status.
 * @param body Value to send as JSON.
 * @param headers More headers (lower-case names).
 * @returns The answer.
 */
export function json(
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): IngestAnswer {
  return {
    status,
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  };
}

/**
 * The status of an error raised on any route (the table in the module
 * doc).
 *
 * @param err The error.
 * @returns Its HTTP status.
 */
export function statusOf(err: unknown): number {
  // What failed decides, not the error's class: a damaged spool is the
  // store's failure even though SpoolError is a SyntaxError.
  if (err instanceof HttpProtocolError) return err.status;
  if (err instanceof SpoolError) return 500;
  // The disk is full: the request was fine, the store has no room (what
  // was acknowledged before is kept).
  if (err instanceof StoreFullError) return 507;
  if (err instanceof PayloadTooLargeError) return 413;
  if (err instanceof UnsupportedMediaTypeError) return 415;
  if (err instanceof SyntaxError || err instanceof URIError) return 400;
  if (err instanceof UnauthorizedError) return 401;
  if (err instanceof ForbiddenRequestError) return 403;
  if (err instanceof RouteNotFoundError) return 404;
  if (err instanceof CaptureNotFoundError) return 404;
  if (err instanceof MethodNotAllowedError) return 405;
  if (err instanceof CaptureFinishedError) return 409;
  if (err instanceof ImportRepeatError) return 409;
  if (
    err instanceof EventShapeError || err instanceof InvalidIdError ||
    err instanceof HookPayloadError
  ) return 422;
  if (err instanceof ServerBusyError) return 503;
  return 500;
}

/**
 * The headers an error's answer carries: `Allow` (405),
 * `WWW-Authenticate` (401), `Retry-After` (503).
 *
 * @param err The error.
 * @returns Lower-case header names and values (empty for most errors).
 */
export function errorHeaders(err: unknown): Record<string, string> {
  if (err instanceof MethodNotAllowedError) {
    return { allow: err.allow.join(", ") };
  }
  if (err instanceof UnauthorizedError) return { "www-authenticate": "Bearer" };
  if (err instanceof ServerBusyError) {
    return { "retry-after": String(err.retryAfterSeconds) };
  }
  return {};
}

/**
 * The message of an error, for a response body.
 *
 * @param err The error.
 * @returns Its message.
 */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** gRPC status codes of OTLP's `Status`, by HTTP status. */
const GRPC_CODES: Record<number, number> = {
  400: 3, // INVALID_ARGUMENT
  401: 16, // UNAUTHENTICATED
  403: 7, // PERMISSION_DENIED
  404: 5, // NOT_FOUND
  405: 12, // UNIMPLEMENTED
  409: 9, // FAILED_PRECONDITION
  413: 8, // RESOURCE_EXHAUSTED
  415: 3, // INVALID_ARGUMENT
  422: 3, // INVALID_ARGUMENT
  503: 14, // UNAVAILABLE
  507: 8, // RESOURCE_EXHAUSTED
};

/** Failures after a hook was taken: answered HTTP 200, so the host never sees them. */
const HOOK_CONTENT = new Set([400, 409, 422, 500, 507]);

/**
 * The answer for an error: its status from {@linkcode statusOf}, its
 * headers from {@linkcode errorHeaders}, its body in the shape of the
 * route's family. Every route, the guards and the server's last guard
 * answer through this.
 *
 * @param err The error.
 * @param shape The route's family.
 * @default {family: "control"}
 * @returns The answer.
 *
 * @example
 * ```ts
 * import { errorAnswer } from "./errors.ts";
 * import { equal } from "node:assert/strict";
 * const err = new SyntaxError("The body is not JSON");
 * equal(errorAnswer(err).status, 400);
 * equal(errorAnswer(err, { family: "hook" }).status, 200);
 * equal(JSON.parse(errorAnswer(err, { family: "otlp" }).body!).code, 3);
 * ```
 */
export function errorAnswer(
  err: unknown,
  shape: ErrorShape = { family: "control" },
): IngestAnswer {
  const status = statusOf(err);
  const headers = errorHeaders(err);
  const message = messageOf(err);
  switch (shape.family) {
    case "model": {
      const a = apiError(shape.api, { status, message });
      return { ...a, headers: { ...a.headers, ...headers } };
    }
    case "otlp":
      return json(status, {
        code: GRPC_CODES[status] ?? 13, // INTERNAL
        message,
        ok: false,
        error: message,
      }, headers);
    case "hook":
      if (HOOK_CONTENT.has(status)) {
        return json(200, { ok: false, error: message });
      }
      return json(status, { ok: false, error: message }, headers);
    default:
      return json(status, { ok: false, error: message }, headers);
  }
}
