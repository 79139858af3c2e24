/**
 * {@linkcode GatewayError}: what the model gateway throws when it answers a
 * request itself rather than relay the upstream's answer. It names the API
 * the gateway read the request as, so the answer's body is that API's own
 * error (`wires/<wire>/errors.ts`), shaped in one place (`errorAnswer`).
 *
 * | code | status | when |
 * | --- | --- | --- |
 * | `path_outside_api` | 400 | the path's dot segments leave the API's base path |
 * | `package_not_found` | 404 | `/p/NAME/…` names no served package |
 * | `body_too_large` | 413 | the request body is past `--max-body-bytes` |
 * | `client_gone` | 502 | the client went away before the upstream answered |
 * | `upstream_unreachable` | 502 | fetch failed, or the answer's body broke off |
 * | `answer_unchecked` | 502 | a served package could not check the upstream's answer |
 * | `gateway_full` | 503 | the gateway holds as many answers as it may |
 * | `upstream_timeout` | 504 | the upstream did not answer within the time-out |
 *
 * @module
 */
import { HttpError } from "./http_error.ts";
import type { WireSpec } from "./wires/wire_spec.ts";

/** The machine codes of the model gateway's own errors. */
export type GatewayErrorCode =
  | "path_outside_api"
  | "package_not_found"
  | "body_too_large"
  | "client_gone"
  | "upstream_unreachable"
  | "answer_unchecked"
  | "gateway_full"
  | "upstream_timeout";

/** The status of each of the gateway's own errors. */
const STATUS: Record<GatewayErrorCode, number> = {
  path_outside_api: 400,
  package_not_found: 404,
  body_too_large: 413,
  client_gone: 502,
  upstream_unreachable: 502,
  answer_unchecked: 502,
  gateway_full: 503,
  upstream_timeout: 504,
};

/**
 * An error the model gateway answers itself, in the shape of the API the
 * client speaks.
 *
 * @example
 * ```ts
 * import { GatewayError } from "./gateway_error.ts";
 * import { WIRE_SPECS } from "./wires/registry.ts";
 * import { equal } from "node:assert/strict";
 * const err = new GatewayError(WIRE_SPECS[0], "upstream_timeout", "slow");
 * equal(err.status, 504);
 * ```
 */
export class GatewayError extends HttpError {
  /** The API the request was read as (its error shape). */
  readonly api: WireSpec;

  /**
   * Create a `GatewayError`.
   *
   * @param api The API the request was read as.
   * @param code What went wrong (its status follows from it).
   * @param message What went wrong and what to do (never a credential).
   * @param cause The error that caused it.
   */
  constructor(
    api: WireSpec,
    code: GatewayErrorCode,
    message: string,
    cause?: unknown,
  ) {
    super(STATUS[code], message, { code, cause });
    this.name = "GatewayError";
    this.api = api;
  }
}
