/**
 * Errors in the Gemini API's shape (Google's `{error: {code, message,
 * status}}`, `status` the RPC code's name), and an upstream's error read
 * back.
 *
 * @module
 */
import { isObject } from "../../wire_types.ts";
import type { WireError, WireErrorAnswer } from "../wire_spec.ts";

/** Google's status names by HTTP status. */
const STATUS: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  413: "INVALID_ARGUMENT",
  429: "RESOURCE_EXHAUSTED",
  500: "INTERNAL",
  502: "UNAVAILABLE",
  503: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED",
};

/**
 * An error answer the gateway makes itself, as the Gemini API words one.
 *
 * @param status HTTP status.
 * @param message What went wrong and what to do (never a credential).
 * @returns The answer.
 *
 * @example
 * ```ts
 * import { equal } from "node:assert/strict";
 * import { geminiError } from "./errors.ts";
 * const a = geminiError(504, "slow");
 * equal(JSON.parse(a.body).error.status, "DEADLINE_EXCEEDED");
 * equal(JSON.parse(a.body).error.code, 504);
 * ```
 */
export function geminiError(status: number, message: string): WireErrorAnswer {
  return {
    status,
    headers: {
      "content-type": "application/json; charset=UTF-8",
      "x-harness-gateway-error": "1",
    },
    body: JSON.stringify({
      error: {
        code: status,
        message,
        status: STATUS[status] ?? (status >= 500 ? "INTERNAL" : "UNKNOWN"),
      },
    }),
  };
}

/**
 * The error a Gemini upstream answered: its `status` name as the type.
 *
 * @param json The body, parsed (null when it is not JSON).
 * @param status The HTTP status.
 * @returns Type and message.
 */
export function geminiErrorOf(json: unknown, status: number): WireError {
  // A stream's error comes as a list of one error object.
  const top = Array.isArray(json) ? json[0] : json;
  const e = isObject(top) && isObject(top.error) ? top.error : null;
  return {
    type: e && typeof e.status === "string" ? e.status : `http_${status}`,
    message: e && typeof e.message === "string"
      ? e.message.slice(0, 2000)
      : `the upstream answered ${status}`,
  };
}
