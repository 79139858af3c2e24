/**
 * Content-addressed blobs under `<root>/blobs/sha256/<hex>`. Writes go to a
 * temporary file that is synced and renamed into place, so a blob file is
 * either whole or absent; equal content is stored once.
 *
 * @module
 */
import { exists, syncDir } from "./fs_sync.ts";
import { join } from "node:path";
import { DIGEST_PREFIX, isDigest, sha256Hex } from "../trace/hash.ts";

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
  #tmpCounter = 0;

  /**
   * Create a `BlobStore`.
   *
   * @param root The store root; blobs live in `<root>/blobs/sha256`.
   */
  constructor(root: string) {
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
   */
  put(data: string | Uint8Array): string {
    const bytes = typeof data === "string"
      ? new TextEncoder().encode(data)
      : data;
    const digest = DIGEST_PREFIX + sha256Hex(bytes);
    const path = this.pathOf(digest);
    try {
      Deno.statSync(path);
      return digest;
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
    const dir = this.#dir;
    const fresh = !exists(dir);
    Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (fresh) syncDir(join(dir, ".."));
    const tmp = `${path}.tmp-${Deno.pid}-${++this.#tmpCounter}`;
    const file = Deno.openSync(tmp, {
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
    Deno.renameSync(tmp, path);
    // The rename is durable only once its directory is.
    syncDir(dir);
    return digest;
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
