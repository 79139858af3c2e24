/**
 * {@linkcode UnservableError}: a package that cannot be served at the model
 * API (a form with no gateway driver).
 *
 * @module
 */

/** The package cannot be served at the model API. */
export class UnservableError extends Error {
  /**
   * Create an `UnservableError`.
   *
   * @param message Why, and what to do.
   */
  constructor(message: string) {
    super(message);
    this.name = "UnservableError";
  }
}
