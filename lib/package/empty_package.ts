/**
 * {@linkcode EmptyPackageError}: a package that would do nothing, refused.
 * Its IR makes no tool call and fills no leaf itself (a tree's `sequence of
 * 0`, an agent form with no lookup and no choice: the model alone, as
 * without a package): compile refuses to write one and run refuses to run
 * one, with the reason; replaying it "clean" proves nothing. Whether an IR
 * is empty is its node kinds' to say (`isEmptyIr`, `lib/forms/`).
 *
 * @module
 */

/** A package that would do nothing, refused; the message says why and what to do. */
export class EmptyPackageError extends Error {
  /**
   * Create an `EmptyPackageError`.
   *
   * @param message Why there is nothing to run and what would give a package.
   */
  constructor(message: string) {
    super(message);
    this.name = "EmptyPackageError";
  }
}
