/**
 * The one place that maps errors to HTTP answers.
 *
 * @module
 */
import { EventShapeError } from "../trace/validate.ts";
import { InvalidIdError } from "../trace/ids.ts";
import { HookPayloadError } from "../adapters/common.ts";
import { CaptureNotFoundError } from "../store/inspect.ts";
import { CaptureFinishedError } from "../store/sink.ts";
import { SpoolError } from "../store/spool.ts";
import type { IngestAnswer } from "./http1/mod.ts";
import { PayloadTooLargeError } from "./payload_too_large.ts";

export { PayloadTooLargeError };

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
 * Status of an error raised while handling `/ingest` or a read route.
 *
 * @param err The error.
 * @returns 400 for unreadable bodies and malformed paths, 404 for a
 * capture that does not exist, 409 for a finished capture, 413 too large, 422 for a well-formed body
 * that is not a valid event, 500 otherwise (the store failed).
 */
export function statusOf(err: unknown): number {
  // What failed decides, not the error's class: a damaged spool is the
  // store's failure even though SpoolError is a SyntaxError.
  if (err instanceof SpoolError) return 500;
  if (err instanceof PayloadTooLargeError) return 413;
  if (err instanceof SyntaxError || err instanceof URIError) return 400;
  if (err instanceof CaptureNotFoundError) return 404;
  if (err instanceof CaptureFinishedError) return 409;
  if (
    err instanceof EventShapeError || err instanceof InvalidIdError ||
    err instanceof HookPayloadError
  ) return 422;
  return 500;
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

/**
 * The JSON answer for an error: its status from {@linkcode statusOf} and
 * `{ok: false, error}`. Every route and the server's last guard answer
 * through this.
 *
 * @param err The error.
 * @returns The answer.
 */
export function errorAnswer(err: unknown): IngestAnswer {
  return json(statusOf(err), { ok: false, error: messageOf(err) });
}
