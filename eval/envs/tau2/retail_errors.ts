/**
 * The error a retail tool throws: its message is exactly τ²'s, so the
 * tool message the model sees is `Error: <message>` as in τ².
 *
 * @module
 */

/** A retail tool refused the call (τ²'s `ValueError` or `TypeError`). */
export class RetailToolError extends Error {
  /**
   * Create a `RetailToolError`.
   *
   * @param message τ²'s message, e.g. `Order not found`.
   * @param options `cause` when wrapping another error.
   */
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "RetailToolError";
  }
}
