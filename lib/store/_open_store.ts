/**
 * Opening a store's root: its folders, the writer's lock and the index, with
 * a damaged index moved aside (writer) or replaced by one in memory (reader).
 *
 * @module
 */
import { join } from "node:path";
import { exists, syncDir } from "./fs_sync.ts";
import { privateDir } from "./_private_files.ts";
import { SqliteIndex } from "./index_db.ts";
import { StoreLock } from "./lock.ts";
import { damagedIndexFinding } from "./_findings.ts";
import type { HarnessStoreOptions, OpenFinding } from "./store_types.ts";

/** What opening a root gave, and how its index must catch up with the spools. */
export interface OpenedRoot {
  /** The writer's lock; null for a reader. */
  lock: StoreLock | null;
  /** The index; null for a reader opened with `index: false`. */
  index: SqliteIndex | null;
  /** A damaged index found on the way. */
  finding: OpenFinding | null;
  /**
   * `none`: the index is used as it is (reader); `memory`: a reader's index
   * rebuilt in memory, without repairs; `repair`: a writer's, repairing torn
   * spool tails as it goes.
   */
  catchUp: "none" | "memory" | "repair";
}

/**
 * Open a root for reading or writing.
 *
 * @param root The root directory.
 * @param options Mode, and the writer's role and URL.
 * @returns The lock, the index and what is left to do.
 * @throws {StoreLockedError} When another writer holds the root.
 * @throws {Deno.errors.NotFound} When a reader finds no index.
 */
export function openRoot(
  root: string,
  options: HarnessStoreOptions,
): OpenedRoot {
  const readOnly = options.readOnly ?? false;
  const dbPath = join(root, "harness.db");
  if (readOnly && options.index === false) {
    return { lock: null, index: null, finding: null, catchUp: "none" };
  }
  if (readOnly) return openReaderIndex(root, dbPath);
  prepareRoot(root);
  const lock = StoreLock.acquire(root, {
    role: options.role ?? "library",
    ...(options.url ? { url: options.url } : {}),
  });
  try {
    return { lock, ...openWriterIndex(dbPath), catchUp: "repair" };
  } catch (err) {
    lock.release();
    throw err;
  }
}

/** Create the root's folders (owner-only), durably when the store is new. */
function prepareRoot(root: string): void {
  const fresh = !exists(join(root, "captures"));
  // A root the store creates is owner-only too (one that exists is left).
  Deno.mkdirSync(root, { recursive: true, mode: 0o700 });
  Deno.mkdirSync(join(root, "captures"), { recursive: true, mode: 0o700 });
  Deno.mkdirSync(join(root, "blobs", "sha256"), {
    recursive: true,
    mode: 0o700,
  });
  // Compiled packages are written here (by the coordinator): owner-only,
  // like the rest of the store.
  privateDir(join(root, "packages"));
  if (fresh) {
    for (const d of [root, join(root, "blobs")]) syncDir(d);
  }
}

/** A reader's index: the file read-only, or one rebuilt in memory when it is damaged. */
function openReaderIndex(root: string, dbPath: string): OpenedRoot {
  try {
    Deno.statSync(dbPath);
  } catch {
    throw new Deno.errors.NotFound(
      `Store ${root} has no index (harness.db): open it once with write access, or run "ingest.ts store rebuild-index"`,
    );
  }
  try {
    const index = new SqliteIndex(dbPath, { readOnly: true });
    index.listCaptures();
    return { lock: null, index, finding: null, catchUp: "none" };
  } catch (err) {
    if (!isDamagedDb(err)) throw err;
    // The index is derived: read from one rebuilt in memory, and change
    // nothing on disk.
    return {
      lock: null,
      index: new SqliteIndex(":memory:"),
      finding: damagedIndexFinding(dbPath, { err, aside: null }),
      catchUp: "memory",
    };
  }
}

/** A writer's index; a damaged one is moved aside and started afresh. */
function openWriterIndex(
  dbPath: string,
): { index: SqliteIndex; finding: OpenFinding | null } {
  try {
    const index = new SqliteIndex(dbPath);
    index.listCaptures();
    return { index, finding: null };
  } catch (err) {
    if (!isDamagedDb(err)) throw err;
    // The index is derived: move the damaged one aside and rebuild.
    const aside = `${dbPath}.damaged-${
      new Date().toISOString().replace(/[-:.]/g, "")
    }`;
    for (const suffix of ["", "-wal", "-shm"]) {
      try {
        Deno.renameSync(dbPath + suffix, aside + suffix);
      } catch { /* not there */ }
    }
    return {
      index: new SqliteIndex(dbPath),
      finding: damagedIndexFinding(dbPath, { err, aside }),
    };
  }
}

/** Whether an error says a SQLite file is not a usable database. */
function isDamagedDb(err: unknown): boolean {
  return /not a database|malformed|corrupt|encrypted|disk image/i.test(
    (err as Error)?.message ?? "",
  );
}
