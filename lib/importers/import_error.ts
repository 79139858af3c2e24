/**
 * The error every importer throws for a file that is not what its format
 * says: it names where (`trajectory 3 (task 7), message 12`) and says that
 * nothing was imported.
 *
 * @module
 */

/** A file that is not what its format says, with where. */
export class ImportError extends SyntaxError {
  /** Where: `trajectory 3, message 12`. */
  readonly position: string;
  /**
   * Create a `ImportError`.
   *
   * @param position Where.
   * @param message What is wrong.
   */
  constructor(position: string, message: string) {
    super(`Cannot import: ${position}: ${message}; nothing was imported`);
    this.name = "ImportError";
    this.position = position;
  }
}
