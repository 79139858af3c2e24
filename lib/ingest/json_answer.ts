/**
 * {@linkcode json}: a JSON answer of the ingest server, for its routes'
 * answers and its error answers alike.
 *
 * @module
 */
import type { IngestAnswer } from "./http1/mod.ts";

/**
 * A JSON answer.
 *
 * @param status HTTP status.
 * @param body Value to send as JSON.
 * @param headers More headers (lower-case names).
 * @returns The answer.
 *
 * @example
 * ```ts
 * import { json } from "./json_answer.ts";
 * import { equal } from "node:assert/strict";
 * equal(json(200, { ok: true }).body, '{"ok":true}');
 * ```
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
