/**
 * Durability of directory entries: a new or renamed file survives a power
 * loss only once its directory is synced too.
 *
 * @module
 */

/**
 * fsync a directory (a no-op where the platform cannot open one).
 *
 * @param dir The directory.
 */
export function syncDir(dir: string): void {
  let f: Deno.FsFile | null = null;
  try {
    f = Deno.openSync(dir, { read: true });
    f.syncSync();
  } catch {
    /* not supported here */
  } finally {
    f?.close();
  }
}

/** Whether a path exists. */
export function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}
