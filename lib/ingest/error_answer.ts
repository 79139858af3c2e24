/**
 * The one place that turns a thrown error into an HTTP answer, for every
 * route of the ingest server and the model gateway (hono's `onError`):
 * {@linkcode errorAnswer}. An error says its status, headers and code
 * ({@linkcode httpErrorOf}: an `HttpError` carries them; the other rooms'
 * typed errors are mapped here, in the table below); the route says the
 * body's shape (its family, second table).
 *
 * | error | status |
 * | --- | --- |
 * | `HttpError` (`lib/model_gateway/http_error.ts`): the refusals of `refusals.ts`, `PayloadTooLargeError`, the model gateway's `GatewayError` | its own |
 * | `HttpProtocolError` (the listener: malformed, over a limit, late) | its own |
 * | `SyntaxError`, `URIError` (not JSON, not UTF-8, not OTLP) | 400 |
 * | `CaptureNotFoundError` | 404 |
 * | `CaptureFinishedError`, `ImportRepeatError` | 409 |
 * | `EventShapeError`, `InvalidIdError`, `HookPayloadError` | 422 |
 * | `StoreFullError` (the disk is full; what was acknowledged is kept) | 507 |
 * | anything else (`SpoolError` included: the store failed) | 500 |
 *
 * The `HttpError`s: `RouteNotFoundError` 404, `MethodNotAllowedError` 405
 * (with `Allow`), `UnauthorizedError` 401 (with `WWW-Authenticate`),
 * `ForbiddenRequestError` 403, `PayloadTooLargeError` 413,
 * `UnsupportedMediaTypeError` 415, `ServerBusyError` 503 (with
 * `Retry-After`), and `GatewayError` (`lib/model_gateway/gateway_error.ts`:
 * 400, 404, 413, 502, 503, 504).
 *
 * | family | body |
 * | --- | --- |
 * | `control` (`/ingest`, `/captures`, `/capture/…`, `/health`, `/admin/…`) | `{ok: false, error}` |
 * | `hook` | `{ok: false, error}`; once read, HTTP 200 (for 400, 409, 422, 500, 507): a host never sees capture fail |
 * | `otlp` | OTLP's `Status` as JSON (`{code, message}`), beside `{ok: false, error}` |
 * | `model` | the API's own error (its wire's `error`, `lib/model_gateway/wires/<wire>/errors.ts`); a `GatewayError` in the API the gateway read the request as |
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
import { GatewayError } from "../model_gateway/gateway_error.ts";
import { HttpError } from "../model_gateway/http_error.ts";
import type { WireSpec } from "../model_gateway/wires/wire_spec.ts";
import type { IngestAnswer } from "./http1/mod.ts";
import { HttpProtocolError } from "./http1/_errors.ts";
import { json } from "./json_answer.ts";

/**
 * Which shape a route's error answers take: the server's own (`control`),
 * the hooks' (`hook`), OTLP's (`otlp`), or a model API's (`model`, with
 * the API the client speaks).
 */
export type ErrorShape =
  | { family: "control" | "hook" | "otlp" }
  | { family: "model"; api: WireSpec };

/** Another room's typed error: its status and code. */
type Mapped = readonly [
  new (...args: never[]) => Error,
  number,
  string,
];

/**
 * The typed errors of the rooms below the server (store, trace, adapters,
 * importers), which know nothing of HTTP: their status and code, tried in
 * order. What failed decides, not the error's class: a damaged spool is the
 * store's failure (500) even though `SpoolError` is a `SyntaxError`.
 */
const MAPPED: readonly Mapped[] = [
  [SpoolError, 500, "store_failed"],
  // The disk is full: the request was fine, the store has no room (what
  // was acknowledged before is kept).
  [StoreFullError, 507, "store_full"],
  [SyntaxError, 400, "bad_request"],
  [URIError, 400, "bad_request"],
  [CaptureNotFoundError, 404, "capture_not_found"],
  [CaptureFinishedError, 409, "capture_finished"],
  [ImportRepeatError, 409, "import_repeat"],
  [EventShapeError, 422, "invalid_event"],
  [InvalidIdError, 422, "invalid_event"],
  [HookPayloadError, 422, "invalid_hook_payload"],
];

/**
 * Any thrown value as an {@linkcode HttpError}: itself when it is one; the
 * listener's `HttpProtocolError` with its own status; another room's typed
 * error by the table in the module doc; anything else 500
 * (`internal_error`). The message is the error's own.
 *
 * @param err What was thrown.
 * @returns The error, with the status, headers and code its answer carries.
 *
 * @example
 * ```ts
 * import { httpErrorOf } from "./error_answer.ts";
 * import { equal } from "node:assert/strict";
 * equal(httpErrorOf(new SyntaxError("not JSON")).status, 400);
 * equal(httpErrorOf(new Error("boom")).code, "internal_error");
 * ```
 */
export function httpErrorOf(err: unknown): HttpError {
  if (err instanceof HttpError) return err;
  const message = messageOf(err);
  if (err instanceof HttpProtocolError) {
    return new HttpError(err.status, message, {
      code: "protocol_error",
      cause: err,
    });
  }
  for (const [type, status, code] of MAPPED) {
    if (err instanceof type) {
      return new HttpError(status, message, { code, cause: err });
    }
  }
  return new HttpError(500, message, { code: "internal_error", cause: err });
}

/**
 * The status of an error raised on any route (the table in the module
 * doc).
 *
 * @param err The error.
 * @returns Its HTTP status.
 */
export function statusOf(err: unknown): number {
  return httpErrorOf(err).status;
}

/**
 * The headers an error's answer carries: `Allow` (405),
 * `WWW-Authenticate` (401), `Retry-After` (503), the model gateway's
 * `x-harness-episode`.
 *
 * @param err The error.
 * @returns Lower-case header names and values (empty for most errors).
 */
export function errorHeaders(err: unknown): Record<string, string> {
  return { ...httpErrorOf(err).headers };
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
 * The answer for any error (the server's `onError`): its status and
 * headers from {@linkcode httpErrorOf}, its body in the shape of the
 * route's family. Every route, the guards, the model gateway's own errors
 * and the server's last guard answer through this; nothing else builds an
 * error answer.
 *
 * @param err The error.
 * @param shape The route's family.
 * @default {family: "control"}
 * @returns The answer.
 *
 * @example
 * ```ts
 * import { errorAnswer } from "./error_answer.ts";
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
  const e = httpErrorOf(err);
  const { status, message } = e;
  const headers = { ...e.headers };
  switch (shape.family) {
    case "model": {
      // The gateway's own error is in the API it read the request as.
      const api = e instanceof GatewayError ? e.api : shape.api;
      const a = apiError(api, { status, message });
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
