/**
 * The single-writer lock of a store root: an exclusive advisory lock on
 * `<root>/harness.lock`, released by the operating system when the holder
 * exits, however it exits. The file names the holder (pid, what it is and,
 * for the ingest server, its URL) so a refused writer can say where to go.
 *
 * @module
 */
import { join } from "node:path";
import { narrow, PRIVATE_FILE_MODE } from "./_private_files.ts";

/** Who holds a store's lock, as written in the lock file. */
export interface LockOwner {
  /** Process id. */
  pid: number;
  /** What holds it: `ingest-server`, `cli`, `library`, … */
  role: string;
  /** When it was taken. */
  since: string;
  /** Base URL of the ingest server holding the store, if any. */
  url?: string;
}

/** Another process already writes to this store. */
export class StoreLockedError extends Error {
  /** The store root. */
  readonly root: string;
  /** The holder, when the lock file could be read. */
  readonly owner: LockOwner | null;
  /**
   * Create a `StoreLockedError`.
   *
   * @param root The store root.
   * @param owner The holder, if known.
   */
  constructor(root: string, owner: LockOwner | null) {
    const who = owner
      ? `process ${owner.pid} (${owner.role}${
        owner.url ? ` at ${owner.url}` : ""
      })`
      : "another process";
    super(
      `Store ${root} is locked by ${who}: only one writer may hold a store; ` +
        (owner?.url
          ? `send events to the ingest server at ${owner.url} instead`
          : "stop that process, or send events through its ingest server (ingest.ts serve)"),
    );
    this.name = "StoreLockedError";
    this.root = root;
    this.owner = owner;
  }
}

/** A held store lock. */
export class StoreLock {
  readonly #file: Deno.FsFile;
  readonly #dir: Deno.FsFile | null;
  /** Path of the file. */
  readonly path: string;
  #released = false;

  private constructor(
    path: string,
    file: Deno.FsFile,
    dir: Deno.FsFile | null,
  ) {
    this.path = path;
    this.#file = file;
    this.#dir = dir;
  }

  /**
   * Take the lock or fail at once.
   *
   * @param root The store root (must exist).
   * @param owner What to write in the lock file.
   * @returns The held lock.
   * @throws {StoreLockedError} When another holder has it.
   */
  static acquire(
    root: string,
    owner: Omit<LockOwner, "pid" | "since">,
  ): StoreLock {
    const path = join(root, "harness.lock");
    const file = Deno.openSync(path, {
      read: true,
      write: true,
      create: true,
      mode: PRIVATE_FILE_MODE,
    });
    narrow(path, PRIVATE_FILE_MODE);
    let locked = false;
    try {
      locked = file.tryLockSync(true);
    } catch (err) {
      file.close();
      throw err;
    }
    if (!locked) {
      file.close();
      throw new StoreLockedError(root, readLockOwner(root));
    }
    // The root folder is locked too: deleting harness.lock (a file anyone
    // may remove) must not let a second writer in.
    let dir: Deno.FsFile | null = null;
    try {
      dir = Deno.openSync(root, { read: true });
      if (!dir.tryLockSync(true)) {
        dir.close();
        file.close();
        throw new StoreLockedError(root, readLockOwner(root));
      }
    } catch (err) {
      if (err instanceof StoreLockedError) throw err;
      dir?.close();
      dir = null; // a platform that cannot lock folders: the file lock stands
    }
    const lock = new StoreLock(path, file, dir);
    lock.update(owner);
    return lock;
  }

  /**
   * Rewrite the holder description (e.g. once a server knows its URL).
   *
   * @param owner Role and URL.
   */
  update(owner: Omit<LockOwner, "pid" | "since">): void {
    const record: LockOwner = {
      pid: Deno.pid,
      since: new Date().toISOString(),
      ...owner,
    };
    const bytes = new TextEncoder().encode(JSON.stringify(record) + "\n");
    this.#file.truncateSync(0);
    this.#file.seekSync(0, Deno.SeekMode.Start);
    let done = 0;
    while (done < bytes.length) {
      done += this.#file.writeSync(bytes.subarray(done));
    }
  }

  /** Release the lock. */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    try {
      this.#file.truncateSync(0);
    } catch { /* best effort */ }
    // Unlock before closing: a process this one is spawning at this moment
    // holds a copy of each descriptor until its exec closes it, and a copy
    // keeps a flock alive; unlocking drops it for every copy at once.
    for (const f of [this.#file, this.#dir]) {
      try {
        f?.unlockSync();
      } catch { /* closing drops it anyway */ }
    }
    this.#file.close();
    this.#dir?.close();
  }
}

/**
 * Read who holds (or last held) a store's lock.
 *
 * @param root The store root.
 * @returns The owner record, or null when absent or unreadable.
 */
export function readLockOwner(root: string): LockOwner | null {
  try {
    const text = Deno.readTextFileSync(join(root, "harness.lock")).trim();
    if (text === "") return null;
    const v = JSON.parse(text);
    return typeof v?.pid === "number" ? v as LockOwner : null;
  } catch {
    return null;
  }
}

/**
 * Whether a store's lock is held right now (by anyone, this process included).
 *
 * @param root The store root.
 * @returns True when a writer holds it.
 */
export function isStoreLocked(root: string): boolean {
  let file: Deno.FsFile;
  try {
    file = Deno.openSync(join(root, "harness.lock"), {
      read: true,
      write: true,
    });
  } catch {
    return false;
  }
  try {
    const got = file.tryLockSync(true);
    if (got) file.unlockSync();
    return !got;
  } finally {
    file.close();
  }
}
