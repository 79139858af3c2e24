/**
 * Errors the gateway itself answers, in the shape of the API the client
 * speaks, so an SDK reads them as it reads the provider's own.
 *
 * @module
 */

/** Which API's error shape. */
export type ApiFamily = "openai" | "anthropic";

/** An answer of the gateway (the ingest handler's answer shape). */
export interface GatewayAnswer {
  /** HTTP status. */
  status: number;
  /** Headers, lower-case names. */
  headers: Record<string, string>;
  /** Body text. */
  body: string | null;
  /** Body bytes as they came from the upstream. */
  raw?: Uint8Array;
  /** A streamed body. */
  stream?: ReadableStream<Uint8Array>;
}

const OPENAI_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  404: "not_found_error",
  413: "invalid_request_error",
  502: "api_error",
  503: "api_error",
  504: "timeout",
};

const ANTHROPIC_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  404: "not_found_error",
  413: "request_too_large",
  502: "api_error",
  503: "overloaded_error",
  504: "timeout_error",
};

/**
 * An error answer in an API's own shape.
 *
 * @param family The API.
 * @param status HTTP status.
 * @param message What went wrong and what to do (never a credential).
 * @returns The answer.
 *
 * @example
 * ```ts
 * import { apiError } from "./api_errors.ts";
 * import { equal } from "node:assert/strict";
 * const a = apiError("anthropic", { status: 502, message: "upstream down" });
 * equal(JSON.parse(a.body!).error.type, "api_error");
 * const slow = apiError("openai", { status: 504, message: "slow" });
 * equal(JSON.parse(slow.body!).error.type, "timeout");
 * ```
 */
export function apiError(
  family: ApiFamily,
  { status, message }: { status: number; message: string },
): GatewayAnswer {
  const body = family === "anthropic"
    ? {
      type: "error",
      error: { type: ANTHROPIC_TYPES[status] ?? "api_error", message },
    }
    : {
      error: {
        message,
        type: OPENAI_TYPES[status] ?? "api_error",
        param: null,
        code: null,
      },
    };
  return {
    status,
    headers: {
      "content-type": "application/json",
      "x-harness-gateway-error": "1",
    },
    body: JSON.stringify(body),
  };
}
