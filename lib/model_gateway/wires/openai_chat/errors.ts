/**
 * Errors in OpenAI's shape (`{error: {message, type, param, code}}`), the
 * gateway's own and an upstream's read back; the Responses API answers its
 * errors alike.
 *
 * @module
 */
import { isObject } from "../../wire_types.ts";
import type { WireError, WireErrorAnswer } from "../wire_spec.ts";

const TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  404: "not_found_error",
  413: "invalid_request_error",
  502: "api_error",
  503: "api_error",
  504: "timeout",
};

/**
 * An error answer the gateway makes itself, as OpenAI words one.
 *
 * @param status HTTP status.
 * @param message What went wrong and what to do (never a credential).
 * @returns The answer.
 *
 * @example
 * ```ts
 * import { equal } from "node:assert/strict";
 * import { openaiError } from "./errors.ts";
 * equal(JSON.parse(openaiError(504, "slow").body).error.type, "timeout");
 * ```
 */
export function openaiError(status: number, message: string): WireErrorAnswer {
  return {
    status,
    headers: {
      "content-type": "application/json",
      "x-harness-gateway-error": "1",
    },
    body: JSON.stringify({
      error: {
        message,
        type: TYPES[status] ?? "api_error",
        param: null,
        code: null,
      },
    }),
  };
}

/**
 * The error an OpenAI or Anthropic upstream answered: `error.type`.
 *
 * @param json The body, parsed (null when it is not JSON).
 * @param status The HTTP status.
 * @returns Type and message.
 */
export function typedErrorOf(json: unknown, status: number): WireError {
  const e = isObject(json) && isObject(json.error) ? json.error : null;
  return {
    type: e && typeof e.type === "string" ? e.type : `http_${status}`,
    message: e && typeof e.message === "string"
      ? e.message.slice(0, 2000)
      : `the upstream answered ${status}`,
  };
}
