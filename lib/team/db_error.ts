/**
 * {@linkcode TeamDbError}: the team database cannot be reached or used.
 *
 * @module
 */

/** The database cannot be reached or used. */
export class TeamDbError extends Error {
  /**
   * Create a `TeamDbError`.
   *
   * @param message What went wrong and what to do.
   * @param options Cause.
   */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "TeamDbError";
  }
}
