/**
 * Where a store keeps its spools: `<root>/captures/<id>.jsonl`, one per
 * capture, named by its (validated) id.
 *
 * @module
 */
import { join } from "node:path";
import { validateId } from "../trace/ids.ts";

/**
 * Path of a capture's spool.
 *
 * @param root The store root.
 * @param captureId Capture id.
 * @returns `<root>/captures/<id>.jsonl`.
 * @throws {InvalidIdError} For a bad id.
 */
export function spoolPathIn(root: string, captureId: string): string {
  return join(root, "captures", `${validateId("capture", captureId)}.jsonl`);
}

/**
 * Ids of every capture with a spool, sorted.
 *
 * @param root The store root.
 * @returns Capture ids (none when there is no `captures/` folder).
 */
export function spoolIds(root: string): string[] {
  const ids: string[] = [];
  try {
    for (const e of Deno.readDirSync(join(root, "captures"))) {
      if (e.isFile && e.name.endsWith(".jsonl")) {
        ids.push(e.name.slice(0, -6));
      }
    }
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  return ids.sort();
}

/**
 * Whether a spool file exists.
 *
 * @param path The spool.
 * @returns True when it is a file.
 */
export function isSpoolFile(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return false;
    throw err;
  }
}

/**
 * Remove a spool that holds nothing (a new capture whose first write
 * failed). A spool with any byte in it is evidence and stays.
 *
 * @param path The spool.
 */
export function removeEmptySpool(path: string): void {
  try {
    if (Deno.statSync(path).size === 0) Deno.removeSync(path);
  } catch {
    // Gone already, or not removable: an empty spool is harmless.
  }
}
