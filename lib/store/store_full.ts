/**
 * {@linkcode StoreFullError}: a write of the store failed because the disk
 * (or the file system's quota) is full. Whatever was acknowledged before is
 * kept: spool lines are whole or cut back, blobs are renamed into place
 * only once written, and index rows wait in memory until a flush succeeds.
 *
 * @module
 */

/** What part of the store a write was for. */
export type StorePart = "spool" | "blobs" | "index";

/** A store write that failed for want of space; free space and retry. */
export class StoreFullError extends Error {
  /** The store root. */
  readonly root: string;
  /** The part whose write failed. */
  readonly part: StorePart;
  /**
   * Create a `StoreFullError`.
   *
   * @param options The store root and the part whose write failed.
   * @param cause The error the system or SQLite gave.
   */
  constructor(options: { root: string; part: StorePart }, cause: unknown) {
    super(
      `Cannot write the store's ${options.part} under ${options.root}: the disk is full (${
        cause instanceof Error ? cause.message : String(cause)
      }); free space on that file system: what was stored is kept and writes resume by themselves`,
      { cause },
    );
    this.name = "StoreFullError";
    this.root = options.root;
    this.part = options.part;
  }
}

/**
 * Whether an error says the disk or quota is full: the system's `ENOSPC`
 * or `EDQUOT` (os errors 28 and 122 on Linux) or SQLite's `SQLITE_FULL`.
 *
 * @param err An error a write threw.
 * @returns True for a full disk.
 */
export function isDiskFull(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (code === "ENOSPC" || code === "EDQUOT") return true;
  const errcode = (err as { errcode?: unknown }).errcode;
  if (errcode === 13) return true; // SQLITE_FULL
  return /No space left on device|Disk quota exceeded|database or disk is full|os error 28\b/i
    .test(err.message);
}

/**
 * The error to throw for a failed write: a {@linkcode StoreFullError} when
 * the disk is full, the error itself otherwise.
 *
 * @param err The error the write threw.
 * @param where The store root and the part written.
 * @returns The error to throw.
 */
export function storeWriteError(
  err: unknown,
  where: { root: string; part: StorePart },
): unknown {
  if (err instanceof StoreFullError || !isDiskFull(err)) return err;
  return new StoreFullError(where, err);
}
