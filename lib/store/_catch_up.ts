/**
 * Bringing the index up to date with the files: each spool is read from the
 * byte the index covered (all of it after a reset, which is how the index is
 * rebuilt), after its torn tail is repaired when a writer opens the store;
 * then the package files the index does not know are registered.
 *
 * @module
 */
import type { TraceEvent } from "../trace/event.ts";
import { splitLinesSync } from "../trace/lines.ts";
import { readChunksSync } from "./file_chunks.ts";
import type { SqliteIndex } from "./index_db.ts";
import { SpoolError, SpoolWriter } from "./spool.ts";
import {
  damagedSpoolFinding,
  shorterSpoolFinding,
  tornTailFinding,
  unindexableLineFinding,
} from "./_findings.ts";
import type { OpenFinding } from "./store_types.ts";
import { catchUpPackages, type RegisterPackage } from "./_packages.ts";

/** Index rows buffered at most while catching up. */
const CATCH_UP_FLUSH_ROWS = 20_000;

/** The files to catch up with, and where to say what was found. */
export interface CatchUpWork {
  /** The store root (for `packages/`). */
  root: string;
  /** The index. */
  index: SqliteIndex;
  /** Captures with a spool. */
  captureIds: string[];
  /** Path of a capture's spool. */
  spoolPath: (captureId: string) => string;
  /** Repair torn tails (a writer) or only read (a reader's index in memory). */
  repair: boolean;
  /** Whether a capture has an open sink (its spool is already repaired). */
  hasSink: (captureId: string) => boolean;
  /** Repairs and problems are appended here. */
  findings: OpenFinding[];
  /** Registers a package file the index does not know. */
  register: RegisterPackage;
}

/**
 * Index whatever the spools hold beyond what the index covers, flush the
 * index (no head receipts: those vouch for appends), then register the
 * unknown packages.
 *
 * @param work The index, the spools and the findings.
 * @returns Captures looked at and events indexed.
 */
export function catchUpIndex(
  work: CatchUpWork,
): { captures: number; events: number } {
  let events = 0;
  for (const captureId of work.captureIds) {
    const path = work.spoolPath(captureId);
    let size = Deno.statSync(path).size;
    if (work.repair && size > 0 && !work.hasSink(captureId)) {
      size = repairSpool(captureId, path, size, work.findings);
    }
    events += indexSpool(work.index, captureId, path, size, work.findings);
  }
  work.index.flush();
  catchUpPackages(work.root, { index: work.index, register: work.register });
  return { captures: work.captureIds.length, events };
}

/**
 * Index what one capture's spool holds beyond what the index covers (after
 * an append run that wrote the spool without the index).
 *
 * @param index The index.
 * @param spool The capture, its spool, and where to say what was found.
 * @returns Events indexed.
 */
export function catchUpCapture(
  index: SqliteIndex,
  spool: { captureId: string; path: string; findings: OpenFinding[] },
): number {
  const size = Deno.statSync(spool.path).size;
  return indexSpool(index, spool.captureId, spool.path, size, spool.findings);
}

/**
 * Open and close a spool to repair a torn tail now; a damaged one is left
 * exactly as it is and reported.
 *
 * @returns The spool's size after the repair.
 */
function repairSpool(
  captureId: string,
  path: string,
  size: number,
  findings: OpenFinding[],
): number {
  try {
    const { writer, info } = SpoolWriter.open(path, { syncIntervalMs: 0 });
    writer.close();
    const repaired = tornTailFinding(captureId, info);
    if (repaired) findings.push(repaired);
    return info.size;
  } catch (err) {
    if (!(err instanceof SpoolError)) throw err;
    // Damaged, not torn: leave it exactly as it is and say so.
    findings.push(damagedSpoolFinding(captureId, err.message));
    return size;
  }
}

/**
 * Index the complete lines of one spool after the bytes already indexed.
 *
 * @returns Events indexed.
 */
function indexSpool(
  index: SqliteIndex,
  captureId: string,
  path: string,
  size: number,
  findings: OpenFinding[],
): number {
  let from = index.getCapture(captureId)?.indexed_bytes ?? 0;
  if (from > size) {
    // The spool is shorter than what was indexed: say so, never drop
    // the recorded head silently (the heads log keeps it too).
    findings.push(
      shorterSpoolFinding(captureId, {
        size,
        indexed: from,
        headSequence: index.getCapture(captureId)?.head_sequence,
      }),
    );
    index.reset(captureId);
    from = 0;
  }
  if (from === size) return 0;
  let events = 0;
  const decoder = new TextDecoder();
  for (
    const line of splitLinesSync(readChunksSync(path, from), {
      startOffset: from,
    })
  ) {
    if (!line.terminated) break;
    let ev: TraceEvent;
    try {
      ev = JSON.parse(decoder.decode(line.bytes));
    } catch {
      findings.push(unindexableLineFinding(captureId, line.offset));
      break;
    }
    index.add(ev, line.offset, line.bytes.length);
    events++;
    if (index.pendingCount >= CATCH_UP_FLUSH_ROWS) index.flush();
  }
  return events;
}
