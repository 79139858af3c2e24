/**
 * The rows of the index `harness.db`: a capture, an episode and one event's
 * row, as queries return them.
 *
 * @module
 */

/** A capture as the index knows it. */
export interface CaptureRecord {
  /** Capture id. */
  capture_id: string;
  /** Label given at `capture start`, or null. */
  label: string | null;
  /** `open`, or `finished` once a `capture.finished` annotation was recorded. */
  status: string;
  /** Events in the spool. */
  event_count: number;
  /** Episodes seen. */
  episode_count: number;
  /** Last sequence. */
  head_sequence: number;
  /** Hash of the last event. */
  head_hash: string;
  /** Spool bytes covered by the index. */
  indexed_bytes: number;
  /** Timestamp of the first event. */
  first_timestamp: string | null;
  /** Timestamp of the last event. */
  last_timestamp: string | null;
  /** When `capture.started` was recorded, or null. */
  started_at: string | null;
  /** When `capture.finished` was recorded, or null. */
  finished_at: string | null;
}

/** An episode as the index knows it. */
export interface EpisodeRecord {
  /** Capture id. */
  capture_id: string;
  /** Episode id. */
  episode_id: string;
  /** Events of the episode. */
  event_count: number;
  /** First sequence. */
  first_sequence: number;
  /** Last sequence. */
  last_sequence: number;
  /** Timestamp of its first event. */
  first_timestamp: string;
  /** Timestamp of its last event. */
  last_timestamp: string;
  /** Whether `episode.started` was seen. */
  started: boolean;
  /** Whether `episode.finished` was seen. */
  finished: boolean;
}

/** One row of `event_index` (the spool line holds the rest of the event). */
export interface EventIndexRow {
  /** Capture id. */
  capture_id: string;
  /** Sequence. */
  sequence: number;
  /** Episode id. */
  episode_id: string;
  /** Kind. */
  kind: string;
  /** Event id. */
  event_id: string;
  /** Parent event id. */
  parent_event_id: string | null;
  /** Timestamp. */
  timestamp: string;
  /** Byte offset of the line in the spool. */
  byte_offset: number;
  /** Byte length of the line, without newline. */
  byte_length: number;
}
