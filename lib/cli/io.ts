/**
 * Where command output goes: the entry passes console-backed functions,
 * tests pass collectors, the daemon passes a log file.
 *
 * @module
 */

/** Output channels of a command. */
export interface Io {
  /** Normal output (stdout). */
  out: (text: string) => void;
  /** Diagnostics (stderr). */
  err: (text: string) => void;
}

/** A command-line mistake: the entry prints usage and exits 2. */
export class UsageError extends Error {
  /**
   * @param message What is wrong.
   * @param options `cause`: the error it comes from.
   */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "UsageError";
  }
}

/** Whether a path exists (one definition, in the store's file helpers). */
export { exists } from "../store/fs_sync.ts";
