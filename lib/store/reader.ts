/**
 * What reading a capture needs, whoever holds it: a local store
 * ({@linkcode HarnessStore}) or the team database (`DbStore`).
 *
 * @module
 */
import type { TraceEvent } from "../trace/event.ts";
import type { ChainReport } from "../trace/jsonl.ts";
import type { CaptureRecord } from "./index_records.ts";

/** The read side of a store. */
export interface CaptureReader {
  /** Where it is (a folder, or a database URL without its password). */
  readonly root: string;
  /** Whether it holds a capture. */
  hasCapture(captureId: string): boolean;
  /** A capture's record. */
  getCapture(captureId: string): CaptureRecord | undefined;
  /** A capture's events in order. */
  readEvents(
    captureId: string,
    options?: { episodeId?: string; resolveBlobs?: boolean },
  ): AsyncGenerator<TraceEvent>;
  /** Verify a capture's chain. */
  verifyCapture(captureId: string): Promise<ChainReport>;
}
