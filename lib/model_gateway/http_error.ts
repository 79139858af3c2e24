/**
 * {@linkcode HttpError}: the one base of every error the ingest server and
 * the model gateway answer with a status of their own. An error carries
 * what its answer says — its HTTP status, the headers it needs
 * (`Retry-After`, `Allow`, `WWW-Authenticate`), a machine code and its
 * message — and never its body: the body's shape is the route's (a hook's
 * `{ok: false, error}` at HTTP 200, the server's `{ok: false, error}`,
 * OTLP's `Status`, a model API's own error), chosen in one place,
 * `errorAnswer` of `lib/ingest/error_answer.ts`.
 *
 * It sits here, the lowest folder that answers HTTP (the ingest server sits
 * above the model gateway and hosts it), so both can throw it.
 *
 * @module
 */

/** What an {@linkcode HttpError} carries besides its status and message. */
export interface HttpErrorOptions {
  /** A machine code: what went wrong, in snake_case (`route_not_found`). */
  code: string;
  /** Headers its answer carries (lower-case names). */
  headers?: Record<string, string>;
  /** The error that caused it. */
  cause?: unknown;
}

/**
 * An error that carries its HTTP answer's status, headers and code; its
 * body's shape is the route's.
 *
 * @example
 * ```ts
 * import { HttpError } from "./http_error.ts";
 * import { equal } from "node:assert/strict";
 * const err = new HttpError(503, "Busy: retry shortly", {
 *   code: "server_busy",
 *   headers: { "retry-after": "1" },
 * });
 * equal(err.status, 503);
 * equal(err.headers["retry-after"], "1");
 * ```
 */
export class HttpError extends Error {
  /** The answer's HTTP status. */
  readonly status: number;
  /** A machine code: what went wrong (`route_not_found`, `upstream_timeout`). */
  readonly code: string;
  /** Headers its answer carries (lower-case names; one may be added on its way out). */
  readonly headers: Record<string, string>;

  /**
   * Create an `HttpError`.
   *
   * @param status The answer's HTTP status.
   * @param message What went wrong and what to do (never a credential).
   * @param options Its code, its answer's headers, its cause.
   */
  constructor(status: number, message: string, options: HttpErrorOptions) {
    super(
      message,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = "HttpError";
    this.status = status;
    this.code = options.code;
    this.headers = { ...options.headers };
  }
}
