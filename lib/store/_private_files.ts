/**
 * Store files are private to their owner: files 0600, folders 0700 (the
 * index, its WAL and shared-memory files, the lock, `packages/`). Files a
 * store made before this rule are tightened when a writer opens it.
 *
 * @module
 */

/** Mode of a store file. */
export const PRIVATE_FILE_MODE = 0o600;
/** Mode of a store folder. */
export const PRIVATE_DIR_MODE = 0o700;

/**
 * Create `path` as an empty owner-only file when it is missing, or narrow an
 * existing one to owner-only. SQLite then gives its `-wal` and `-shm` files
 * the same mode.
 *
 * @param path The file.
 */
export function privateFile(path: string): void {
  try {
    Deno.openSync(path, {
      write: true,
      createNew: true,
      mode: PRIVATE_FILE_MODE,
    })
      .close();
  } catch (err) {
    if (!(err instanceof Deno.errors.AlreadyExists)) throw err;
    narrow(path, PRIVATE_FILE_MODE);
  }
}

/**
 * Create `path` (and missing parents) as owner-only folders, or narrow an
 * existing one to owner-only.
 *
 * @param path The folder.
 */
export function privateDir(path: string): void {
  Deno.mkdirSync(path, { recursive: true, mode: PRIVATE_DIR_MODE });
  narrow(path, PRIVATE_DIR_MODE);
}

/**
 * Take group and other permissions away from `path` when it has any; a
 * missing path, or a platform without modes (Windows), is left as it is.
 *
 * @param path A file or folder.
 * @param mode The mode it should have at most.
 */
export function narrow(path: string, mode: number): void {
  let info: Deno.FileInfo;
  try {
    info = Deno.statSync(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return;
    throw err;
  }
  if (info.mode === null || (info.mode & 0o077) === 0) return;
  try {
    Deno.chmodSync(path, info.mode & mode & 0o777);
  } catch (err) {
    // Windows, or a file someone else owns: the store still works.
    if (
      !(err instanceof Deno.errors.NotSupported) &&
      !(err instanceof Deno.errors.PermissionDenied)
    ) throw err;
  }
}
