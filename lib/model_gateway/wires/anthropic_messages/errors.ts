/**
 * Errors in Anthropic's shape (`{type: "error", error: {type, message}}`).
 *
 * @module
 */
import type { WireErrorAnswer } from "../wire_spec.ts";

const TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  404: "not_found_error",
  413: "request_too_large",
  502: "api_error",
  503: "overloaded_error",
  504: "timeout_error",
};

/**
 * An error answer the gateway makes itself, as Anthropic words one.
 *
 * @param status HTTP status.
 * @param message What went wrong and what to do (never a credential).
 * @returns The answer.
 *
 * @example
 * ```ts
 * import { equal } from "node:assert/strict";
 * import { anthropicError } from "./errors.ts";
 * equal(JSON.parse(anthropicError(502, "down").body).error.type, "api_error");
 * ```
 */
export function anthropicError(
  status: number,
  message: string,
): WireErrorAnswer {
  return {
    status,
    headers: {
      "content-type": "application/json",
      "x-harness-gateway-error": "1",
    },
    body: JSON.stringify({
      type: "error",
      error: { type: TYPES[status] ?? "api_error", message },
    }),
  };
}
