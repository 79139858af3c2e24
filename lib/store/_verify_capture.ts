/**
 * Verifying a capture's spool against the heads recorded outside it: the
 * caller's expected head, the last receipt in `heads.log` and the index. A
 * spool that is internally sound but shorter than, or different from, one of
 * those anchors lost or rewrote acknowledged events.
 *
 * @module
 */
import { type ChainReport, verifyChain } from "../trace/jsonl.ts";
import { readChunks } from "./file_chunks.ts";
import { lastReceipt } from "./heads.ts";
import type { SqliteIndex } from "./index_db.ts";
import type { HeadAnchor } from "./store_types.ts";

/** Where {@linkcode headAnchors} finds a capture's recorded heads. */
export interface HeadSources {
  /** The store root (for `heads.log`). */
  root: string;
  /** The index, or null when the store has none open. */
  index: SqliteIndex | null;
  /** The caller's expected head, if any. */
  expectHead?: { sequence: number; hash: string } | null;
}

/** A chain report with the anchor it was checked against. */
export type AnchoredReport = ChainReport & { anchor: HeadAnchor | null };

/**
 * The heads recorded for a capture outside its spool.
 *
 * @param captureId The capture.
 * @param from Where the heads are: the store root (for `heads.log`), the
 *   index (null when the store has none open), the caller's expected head.
 * @returns The anchors: expected, heads.log, index (those that exist).
 */
export function headAnchors(
  captureId: string,
  from: HeadSources,
): HeadAnchor[] {
  const { root, index, expectHead } = from;
  const receipt = lastReceipt(root, captureId);
  const indexed = index?.getCapture(captureId);
  return [
    ...(expectHead ? [{ ...expectHead, source: "expected" }] : []),
    ...(receipt
      ? [{
        sequence: receipt.sequence,
        hash: receipt.hash,
        source: "heads.log",
      }]
      : []),
    ...(indexed && indexed.head_sequence > 0
      ? [{
        sequence: indexed.head_sequence,
        hash: indexed.head_hash,
        source: "index",
      }]
      : []),
  ];
}

/**
 * Verify a spool's chain, streaming, then check it against the anchors.
 *
 * @param spoolPath The spool.
 * @param against Its capture, and the heads recorded outside the spool.
 * @returns The report, with the highest anchor (or the one it contradicts).
 */
export async function verifyAnchored(
  spoolPath: string,
  against: { captureId: string; anchors: HeadAnchor[] },
): Promise<AnchoredReport> {
  const { captureId, anchors } = against;
  const report = await verifyChain(readChunks(spoolPath), {
    captureId,
    anchors: anchors.map((a) => a.sequence),
  });
  const anchor = anchors.sort((a, b) => b.sequence - a.sequence)[0] ?? null;
  if (!report.ok || !anchor) return { ...report, anchor };
  for (const a of anchors) {
    const broken = contradiction(report, a);
    if (broken) return broken;
  }
  return { ...report, anchor };
}

/** The failed report when a sound spool contradicts one anchor, else null. */
function contradiction(
  report: ChainReport,
  a: HeadAnchor,
): AnchoredReport | null {
  const seen = report.hashes_at?.[a.sequence];
  if (report.head_sequence < a.sequence) {
    return {
      ...report,
      ok: false,
      anchor: a,
      problem: {
        kind: "truncated",
        sequence: report.head_sequence + 1,
        line: report.head_sequence + 1,
        byte_offset: report.bytes,
        message:
          `The spool ends at sequence ${report.head_sequence}, but ${a.source} recorded sequence ${a.sequence} (${a.hash}): acknowledged events are gone`,
      },
    };
  }
  if (seen !== undefined && seen !== a.hash) {
    return {
      ...report,
      ok: false,
      anchor: a,
      problem: {
        kind: "rewritten",
        sequence: a.sequence,
        line: a.sequence,
        byte_offset: 0,
        message:
          `Sequence ${a.sequence} hashes to ${seen}, but ${a.source} recorded ${a.hash}: the spool was rewritten and re-hashed`,
      },
    };
  }
  return null;
}
