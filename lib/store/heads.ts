/**
 * Head receipts: outside the spool, an append-only, fsynced `heads.log`
 * in the store root records each capture's chain head (sequence and hash)
 * as the index is flushed. A spool cut short, or rewritten and re-hashed to
 * the end, still verifies on its own; against its last receipt it does not.
 *
 * Line format: `{"capture_id","sequence","hash","at"}` (canonical JSON).
 *
 * @module
 */
import { join } from "node:path";

/** One receipt. */
export interface HeadReceipt {
  /** Capture. */
  capture_id: string;
  /** Sequence of the head. */
  sequence: number;
  /** Its event hash. */
  hash: string;
  /** When it was written. */
  at: string;
}

/** Path of a store's heads log. */
export function headsPath(root: string): string {
  return join(root, "heads.log");
}

/**
 * The last receipt of a capture, if any (a torn last line is ignored).
 *
 * @param root Store root.
 * @param captureId Capture.
 * @returns The receipt, or null.
 */
export function lastReceipt(
  root: string,
  captureId: string,
): HeadReceipt | null {
  let text: string;
  try {
    text = Deno.readTextFileSync(headsPath(root));
  } catch {
    return null;
  }
  const needle = `{"capture_id":${JSON.stringify(captureId)},`;
  let end = text.length;
  while (end > 0) {
    const at = text.lastIndexOf(needle, end - 1);
    if (at < 0) return null;
    const nl = text.indexOf("\n", at);
    if (nl > 0) {
      try {
        return JSON.parse(text.slice(at, nl)) as HeadReceipt;
      } catch { /* a damaged line: look further back */ }
    }
    end = at;
  }
  return null;
}

/**
 * The heads log of a writer: receipts appended with one write each, and
 * `fdatasync`ed in the background (coalesced), never blocking the caller.
 */
export class ReceiptLog {
  readonly #file: Deno.FsFile;
  #syncing: Promise<void> | null = null;
  #dirty = false;

  /**
   * Create a `ReceiptLog`.
   *
   * @param root Store root.
   */
  constructor(root: string) {
    this.#file = Deno.openSync(headsPath(root), {
      append: true,
      create: true,
      mode: 0o600,
    });
  }

  /**
   * Append receipts.
   *
   * @param receipts The receipts.
   * @param now Sync them on this thread before returning (a quiet moment:
   *   no second wake of the event loop); otherwise in the background.
   */
  append(receipts: HeadReceipt[], now = false): void {
    const bytes = new TextEncoder().encode(
      receipts.map((r) => JSON.stringify(r) + "\n").join(""),
    );
    let done = 0;
    while (done < bytes.length) {
      done += this.#file.writeSync(bytes.subarray(done));
    }
    if (now) {
      this.#file.syncDataSync();
      return;
    }
    this.#dirty = true;
    this.#sync();
  }

  #sync(): void {
    if (this.#syncing) return;
    this.#dirty = false;
    this.#syncing = this.#file.syncData().catch(() => {}).finally(() => {
      this.#syncing = null;
      if (this.#dirty) this.#sync();
    });
  }

  /** Sync now and close. */
  close(): void {
    try {
      this.#file.syncDataSync();
    } catch { /* closed */ }
    this.#file.close();
  }
}
