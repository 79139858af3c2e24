/**
 * The option and result types of `HarnessStore`: how to open it,
 * what opening found, how to read events, and the anchors a verify checks.
 *
 * @module
 */
import type { RedactionRule } from "../trace/redact.ts";

/** Options of `HarnessStore`. */
export interface HarnessStoreOptions {
  /**
   * Open for reading only: no lock, no repair, no writes. Readers never block
   * and never wait for the writer.
   * @default false
   */
  readOnly?: boolean;
  /**
   * What the writer is, written into the lock file.
   * @default "library"
   */
  role?: string;
  /**
   * Credential shapes redacted from every payload before it is sealed, on
   * every path into the store (hooks, `/ingest`, OTLP, importers, the proxy,
   * the gateways); `false` turns it off.
   * @default DEFAULT_REDACTION_RULES
   */
  redaction?: readonly RedactionRule[] | false;
  /** URL to advertise in the lock file (the ingest server's). */
  url?: string;
  /**
   * With `readOnly`, skip the index entirely: only spools and blobs are
   * read (what the compiler needs; it then needs no access to harness.db).
   * @default true
   */
  index?: boolean;
  /**
   * Canonical-JSON size above which payload values move to blobs.
   * @default 16384
   */
  blobThreshold?: number;
  /**
   * Longest wait of an appended line for `fdatasync` (power-loss window); 0 syncs each append.
   * @default 100
   */
  syncIntervalMs?: number;
  /**
   * Spool files kept open at most; the least recently used are closed
   * (their sinks reopen them on the next event), so many captures cannot
   * exhaust the process's file handles.
   * @default 128
   */
  maxOpenSpools?: number;
  /**
   * Longest delay before buffered index rows are written.
   * @default 50
   */
  indexFlushMs?: number;
  /**
   * Buffered index rows that force a write.
   * @default 5000
   */
  indexFlushRows?: number;
}

/** A repair or problem found while opening a store. */
export interface OpenFinding {
  /** The capture. */
  capture_id: string;
  /** `torn_tail_repaired`, `damaged_spool`, `unindexable_line`, or (capture_id empty) `damaged_index` or `blob_temporaries_removed`. */
  kind: string;
  /** What happened. */
  message: string;
}

/** A head recorded outside the spool, that a verify checks the spool against. */
export interface HeadAnchor {
  /** Sequence. */
  sequence: number;
  /** Its hash. */
  hash: string;
  /** Where it came from: `expected` (the caller), `heads.log`, `index`. */
  source: string;
}

/** Options of `HarnessStore.readEvents`. */
export interface ReadEventsOptions {
  /** Only this episode. */
  episodeId?: string;
  /**
   * Replace blob references by their content.
   * @default true
   */
  resolveBlobs?: boolean;
}
