/**
 * The findings a store reports when it opens or catches its index up: each
 * repair it made and each problem it left for someone to look at.
 *
 * @module
 */
import type { SpoolOpenInfo } from "./spool.ts";
import type { OpenFinding } from "./store_types.ts";

/**
 * A torn last line moved aside when a spool was opened.
 *
 * @param captureId The capture.
 * @param info What opening its spool found.
 * @returns The finding, or null when nothing was repaired.
 */
export function tornTailFinding(
  captureId: string,
  info: SpoolOpenInfo,
): OpenFinding | null {
  if (!info.repaired) return null;
  return {
    capture_id: captureId,
    kind: "torn_tail_repaired",
    message:
      `Capture "${captureId}": a torn last line (${info.repaired.bytes} bytes at ${info.repaired.offset}) was moved to ${info.repaired.saved_to}`,
  };
}

/**
 * A spool whose last complete line is not a sealed event, left as it is.
 *
 * @param captureId The capture.
 * @param message The spool error's message.
 * @returns The finding.
 */
export function damagedSpoolFinding(
  captureId: string,
  message: string,
): OpenFinding {
  return { capture_id: captureId, kind: "damaged_spool", message };
}

/**
 * A spool shorter than what the index covered: acknowledged events are gone.
 *
 * @param captureId The capture.
 * @param sizes The spool's size in bytes, the bytes the index covered and
 *   the head it recorded.
 * @returns The finding.
 */
export function shorterSpoolFinding(
  captureId: string,
  sizes: { size: number; indexed: number; headSequence: number | undefined },
): OpenFinding {
  const { size, indexed, headSequence } = sizes;
  return {
    capture_id: captureId,
    kind: "spool_shorter_than_index",
    message:
      `The spool of capture "${captureId}" is ${size} bytes, shorter than the ${indexed} bytes indexed (head was sequence ${headSequence}): acknowledged events are gone; "capture verify ${captureId}" compares it with its head receipt`,
  };
}

/**
 * A complete spool line that is not JSON: the index stops before it.
 *
 * @param captureId The capture.
 * @param offset Byte offset of the line.
 * @returns The finding.
 */
export function unindexableLineFinding(
  captureId: string,
  offset: number,
): OpenFinding {
  return {
    capture_id: captureId,
    kind: "unindexable_line",
    message:
      `Capture "${captureId}" has a line at byte ${offset} that is not JSON; indexed up to it. Run "capture verify ${captureId}"`,
  };
}

/**
 * A damaged `harness.db`: a writer moved it aside and rebuilt it, a reader
 * read from an index rebuilt in memory.
 *
 * @param dbPath Path of the index.
 * @param what What opening it threw, and where a writer moved it (null for
 *   a reader).
 * @returns The finding (its capture id is empty: it is about the store).
 */
export function damagedIndexFinding(
  dbPath: string,
  what: { err: unknown; aside: string | null },
): OpenFinding {
  const { err, aside } = what;
  const why = (err as Error).message;
  return {
    capture_id: "",
    kind: "damaged_index",
    message: aside === null
      ? `The index ${dbPath} is damaged (${why}); read from an index rebuilt in memory. Open the store with write access (or "store rebuild-index") to rebuild it on disk`
      : `The index ${dbPath} was damaged (${why}): moved it aside to ${aside} and rebuilt it from the spools`,
  };
}
