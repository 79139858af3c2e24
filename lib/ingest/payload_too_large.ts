/**
 * {@linkcode PayloadTooLargeError}: a request body past its limit (413).
 *
 * @module
 */

/** A request body over the size limit. */
export class PayloadTooLargeError extends RangeError {
  /** The limit in bytes. */
  readonly limit: number;
  /**
   * Create a `PayloadTooLargeError`.
   *
   * @param limit The limit in bytes.
   */
  constructor(limit: number) {
    super(`Request body is larger than the limit of ${limit} bytes`);
    this.name = "PayloadTooLargeError";
    this.limit = limit;
  }
}
