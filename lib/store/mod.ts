/**
 * The store: `HarnessStore` (append-only JSONL spools, content-addressed
 * blobs, the rebuildable SQLite index, the single-writer lock) and its
 * sinks; the records it reads back; the check of a spool's hash chain (what
 * `verifyCapture` runs, and `verifyChain` for spool bytes held elsewhere);
 * and the errors a caller catches.
 *
 * The mechanism behind it (spool writer, index, lock, blob store, heads
 * log) is imported by the harness from its files under `lib/store/`.
 *
 * @module
 */
export { HarnessStore } from "./store.ts";
export type {
  HarnessStoreOptions,
  HeadAnchor,
  OpenFinding,
  ReadEventsOptions,
} from "./store_types.ts";
export type { CaptureRecord, EpisodeRecord } from "./index_records.ts";
export type { CaptureReader } from "./reader.ts";
export {
  CaptureFinishedError,
  JsonlTraceSink,
  type TraceSink,
} from "./sink.ts";
export { type BlobRef, isBlobRef } from "./blob_refs.ts";
export type { ChainHead } from "../trace/chain.ts";
export {
  type ChainProblem,
  type ChainProblemKind,
  type ChainReport,
  verifyChain,
  type VerifyChainOptions,
} from "../trace/jsonl.ts";
export { BlobError } from "./blobs.ts";
export { SpoolError } from "./spool.ts";
export { type LockOwner, StoreLockedError } from "./lock.ts";
export {
  ActiveCaptureError,
  deleteCaptures,
  type DeleteCapturesOptions,
  type DeletedCapture,
} from "./delete_capture.ts";
export {
  pruneCaptures,
  type PruneCapturesOptions,
  type PruneResult,
} from "./prune_captures.ts";
export { StoreFullError, type StorePart } from "./store_full.ts";
export type { StoreHealth, StorePartFailure } from "./write_health.ts";
