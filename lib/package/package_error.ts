/**
 * {@linkcode PackageError}: a behavior package that cannot be read, is not
 * valid, or was changed after it was built.
 *
 * @module
 */

/** A package that cannot be run. */
export class PackageError extends Error {
  /**
   * Create a `PackageError`.
   *
   * @param message What is wrong and what to do.
   * @param options Cause.
   */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "PackageError";
  }
}
