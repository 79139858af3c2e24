/**
 * Retention: delete the captures nothing was written to for a given time
 * (the spool's last write), except the active one, with
 * {@linkcode deleteCaptures}.
 *
 * @module
 */
import { spoolIds, spoolPathIn } from "./_spool_files.ts";
import { readActiveCapture } from "./active_capture.ts";
import { deleteCaptures, type DeletedCapture } from "./delete_capture.ts";

/** Options of {@linkcode pruneCaptures}. */
export interface PruneCapturesOptions {
  /** Delete captures last written more than this many milliseconds ago. */
  olderThanMs: number;
  /** The current time in epoch milliseconds (injected: tests fix the clock). */
  now: number;
  /**
   * Only say what would go.
   * @default false
   */
  dryRun?: boolean;
}

/** What a prune did (or would do). */
export interface PruneResult {
  /** Captures past the age, in id order. */
  expired: string[];
  /** What deleting them removed (empty on a dry run). */
  deleted: DeletedCapture[];
  /** The active capture, when past the age: kept (finish it to let it go). */
  kept_active: string | null;
}

/**
 * Delete every capture not written to for `olderThanMs`, but the active one.
 *
 * @param root The store root.
 * @param options Age, clock, dry run.
 * @returns What expired and what was removed.
 * @throws {RangeError} A negative or non-finite age.
 * @throws {StoreLockedError} Another process holds the store.
 */
export function pruneCaptures(
  root: string,
  options: PruneCapturesOptions,
): PruneResult {
  if (!Number.isFinite(options.olderThanMs) || options.olderThanMs < 0) {
    throw new RangeError(
      `The retention age must be a whole, positive time, not ${options.olderThanMs} ms`,
    );
  }
  const cutoff = options.now - options.olderThanMs;
  const active = readActiveCapture(root);
  const expired: string[] = [];
  let keptActive: string | null = null;
  for (const id of spoolIds(root)) {
    const mtime = Deno.statSync(spoolPathIn(root, id)).mtime?.getTime();
    if (mtime === undefined || mtime >= cutoff) continue;
    if (id === active) keptActive = id;
    else expired.push(id);
  }
  const deleted = options.dryRun || expired.length === 0
    ? []
    : deleteCaptures(root, expired);
  return { expired, deleted, kept_active: keptActive };
}
