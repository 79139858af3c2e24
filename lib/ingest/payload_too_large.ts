/**
 * {@linkcode PayloadTooLargeError}: a request body past its limit (413).
 *
 * @module
 */

import { HttpError } from "../model_gateway/http_error.ts";

/** A request body over the size limit. */
export class PayloadTooLargeError extends HttpError {
  /** The limit in bytes. */
  readonly limit: number;
  /**
   * Create a `PayloadTooLargeError`.
   *
   * @param limit The limit in bytes.
   */
  constructor(limit: number) {
    super(413, `Request body is larger than the limit of ${limit} bytes`, {
      code: "payload_too_large",
    });
    this.name = "PayloadTooLargeError";
    this.limit = limit;
  }
}
