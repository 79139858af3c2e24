/**
 * The active capture pointer: `<root>/active_capture`, a text file holding
 * the id of the capture `capture start` opened. Hook events without `cap`
 * go there. It is a pointer, not evidence: it lives outside `captures/`.
 *
 * @module
 */
import { join } from "node:path";
import { isValidId } from "../trace/ids.ts";

/** File name of the pointer under the store root. */
export const ACTIVE_CAPTURE_FILE = "active_capture";

/**
 * Read the active capture id.
 *
 * @param root Store root.
 * @returns The id, or null when none (or the file does not hold a valid id).
 */
export function readActiveCapture(root: string): string | null {
  try {
    const id = Deno.readTextFileSync(join(root, ACTIVE_CAPTURE_FILE)).trim();
    return isValidId(id) ? id : null;
  } catch {
    return null;
  }
}

/**
 * Set or clear the active capture.
 *
 * @param root Store root.
 * @param id The capture id, or null to clear.
 */
export function writeActiveCapture(root: string, id: string | null): void {
  const path = join(root, ACTIVE_CAPTURE_FILE);
  if (id === null) {
    try {
      Deno.removeSync(path);
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
    return;
  }
  const tmp = `${path}.tmp-${Deno.pid}`;
  Deno.writeTextFileSync(tmp, id + "\n", { mode: 0o600 });
  Deno.renameSync(tmp, path);
}

/**
 * A cached reader: re-reads the file only when its modification time changes.
 *
 * @param root Store root.
 * @returns A function giving the current active capture.
 */
export function activeCaptureReader(root: string): () => string | null {
  const path = join(root, ACTIVE_CAPTURE_FILE);
  let mtime = -1;
  let value: string | null = null;
  return () => {
    let m: number;
    try {
      m = Deno.statSync(path).mtime?.getTime() ?? 0;
    } catch {
      mtime = -1;
      return value = null;
    }
    if (m !== mtime) {
      mtime = m;
      value = readActiveCapture(root);
    }
    return value;
  };
}
