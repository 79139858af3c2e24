/**
 * The store: `HarnessStore` (append-only JSONL spools, content-addressed blobs, the rebuildable SQLite index, the single-writer lock) and its sinks.
 *
 * @module
 */
export { BlobError, BlobStore } from "./blobs.ts";
export {
  type BlobRef,
  DEFAULT_BLOB_THRESHOLD,
  externalizePayload,
  type GetBlobText,
  isBlobRef,
  type PutBlob,
  resolveBlobRefs,
} from "./blob_refs.ts";
export { SqliteIndex, type SqliteIndexOptions } from "./index_db.ts";
export type {
  CaptureRecord,
  EpisodeRecord,
  EventIndexRow,
} from "./index_records.ts";
export {
  isStoreLocked,
  type LockOwner,
  readLockOwner,
  StoreLock,
  StoreLockedError,
} from "./lock.ts";
export {
  SpoolError,
  type SpoolOpenInfo,
  SpoolWriter,
  type SpoolWriterOptions,
} from "./spool.ts";
export {
  CaptureFinishedError,
  JsonlTraceSink,
  type SinkWiring,
  type TraceSink,
} from "./sink.ts";
export { HarnessStore } from "./store.ts";
export type {
  HarnessStoreOptions,
  HeadAnchor,
  OpenFinding,
  ReadEventsOptions,
} from "./store_types.ts";
export {
  appendReceipts,
  type HeadReceipt,
  headsPath,
  lastReceipt,
} from "./heads.ts";
export type { CaptureReader } from "./reader.ts";
