/**
 * Content-addressed blobs under `<root>/blobs/sha256/<hex>`. Writes go to a
 * temporary file that is synced and renamed into place, so a blob file is
 * either whole or absent; equal content is stored once. A failed write
 * removes its temporary file, and the writer sweeps the ones a killed
 * process left when it opens the store.
 *
 * @module
 */
import { exists, syncDir } from "./fs_sync.ts";
import { join } from "node:path";
import { DIGEST_PREFIX, isDigest, sha256Hex } from "../trace/hash.ts";
import { storeWriteError } from "./store_full.ts";

/** What marks a blob write's temporary file: `<hex>.tmp-<pid>-<n>`. */
const TMP_MARK = ".tmp-";

/** Write a new file whole and sync it. */
function writeWhole(path: string, bytes: Uint8Array): void {
  const file = Deno.openSync(path, {
    write: true,
    create: true,
    truncate: true,
    mode: 0o600,
  });
  try {
    let done = 0;
    while (done < bytes.length) done += file.writeSync(bytes.subarray(done));
    file.syncDataSync();
  } finally {
    file.close();
  }
}

/** A blob whose bytes no longer match its digest, or that is missing. */
export class BlobError extends Error {
  /** The digest asked for. */
  readonly digest: string;
  /**
   * Create a `BlobError`.
   *
   * @param digest The digest asked for.
   * @param message What is wrong.
   * @param options Cause.
   */
  constructor(digest: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "BlobError";
    this.digest = digest;
  }
}

/** The blob directory of a store. */
export class BlobStore {
  readonly #dir: string;
  readonly #root: string;
  #tmpCounter = 0;

  /**
   * Create a `BlobStore`.
   *
   * @param root The store root; blobs live in `<root>/blobs/sha256`.
   */
  constructor(root: string) {
    this.#root = root;
    this.#dir = join(root, "blobs", "sha256");
  }

  /**
   * Path of a blob file.
   *
   * @param digest `sha256:<hex>`.
   * @returns The file path.
   * @throws {TypeError} For a malformed digest.
   */
  pathOf(digest: string): string {
    if (!isDigest(digest)) {
      throw new TypeError(
        `Invalid blob digest ${
          JSON.stringify(digest)
        }: expected sha256:<64 hex>`,
      );
    }
    return join(this.#dir, digest.slice(DIGEST_PREFIX.length));
  }

  /**
   * Store bytes (written once; later puts of equal content are free).
   *
   * @param data Text (stored as UTF-8) or bytes.
   * @returns The digest `sha256:<hex>`.
   * @throws {StoreFullError} When the disk is full (nothing is left behind).
   */
  put(data: string | Uint8Array): string {
    // A string is hashed as its UTF-8 (as the encoder writes it, a lone
    // surrogate as U+FFFD) without encoding it first: most puts find the
    // blob stored already (an agent's tools, again).
    const digest = DIGEST_PREFIX + sha256Hex(data);
    const path = this.pathOf(digest);
    try {
      Deno.statSync(path);
      return digest;
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
    const bytes = typeof data === "string"
      ? new TextEncoder().encode(data)
      : data;
    const dir = this.#dir;
    const fresh = !exists(dir);
    Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (fresh) syncDir(join(dir, ".."));
    const tmp = `${path}${TMP_MARK}${Deno.pid}-${++this.#tmpCounter}`;
    try {
      writeWhole(tmp, bytes);
      Deno.renameSync(tmp, path);
    } catch (err) {
      // A full disk must not leave empty or partial temporary files behind.
      try {
        Deno.removeSync(tmp);
      } catch { /* never created, or already renamed */ }
      throw storeWriteError(err, { root: this.#root, part: "blobs" });
    }
    // The rename is durable only once its directory is.
    syncDir(dir);
    return digest;
  }

  /**
   * Remove the temporary files of blob writes that never finished (a
   * process killed mid-write). Only the store's one writer may call this,
   * when it opens: no other write can be under way then.
   *
   * @returns How many files were removed.
   */
  sweepTemporary(): number {
    let removed = 0;
    let entries: Iterable<Deno.DirEntry>;
    try {
      entries = Deno.readDirSync(this.#dir);
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return 0;
      throw err;
    }
    for (const entry of entries) {
      if (!entry.isFile || !entry.name.includes(TMP_MARK)) continue;
      try {
        Deno.removeSync(join(this.#dir, entry.name));
        removed++;
      } catch (err) {
        if (!(err instanceof Deno.errors.NotFound)) throw err;
      }
    }
    return removed;
  }

  /**
   * Whether a blob is stored.
   *
   * @param digest `sha256:<hex>`.
   * @returns True when the file exists.
   */
  has(digest: string): boolean {
    try {
      Deno.statSync(this.pathOf(digest));
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Read a blob and check its digest.
   *
   * @param digest `sha256:<hex>`.
   * @returns The bytes.
   * @throws {BlobError} When it is missing or its bytes do not match.
   */
  get(digest: string): Uint8Array {
    let bytes: Uint8Array;
    try {
      bytes = Deno.readFileSync(this.pathOf(digest));
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) {
        throw new BlobError(
          digest,
          `Blob ${digest} is missing from ${this.#dir}: restore it from a backup of the store`,
          { cause: err },
        );
      }
      throw err;
    }
    if (DIGEST_PREFIX + sha256Hex(bytes) !== digest) {
      throw new BlobError(
        digest,
        `Blob ${digest} does not match its digest: the file was altered`,
      );
    }
    return bytes;
  }

  /**
   * Read a blob as UTF-8 text.
   *
   * @param digest `sha256:<hex>`.
   * @returns The text.
   */
  getText(digest: string): string {
    return new TextDecoder().decode(this.get(digest));
  }
}
