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
export {
  type CaptureRecord,
  type EpisodeRecord,
  type EventIndexRow,
  SqliteIndex,
  type SqliteIndexOptions,
} from "./index_db.ts";
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
export {
  HarnessStore,
  type HarnessStoreOptions,
  type HeadAnchor,
  type OpenFinding,
  type ReadEventsOptions,
} from "./store.ts";
export {
  appendReceipts,
  type HeadReceipt,
  headsPath,
  lastReceipt,
} from "./heads.ts";
export type { CaptureReader } from "./reader.ts";
export {
  ACTIVE_CAPTURE_FILE,
  readActiveCapture,
  writeActiveCapture,
} from "./active_capture.ts";
