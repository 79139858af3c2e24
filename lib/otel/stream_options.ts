/**
 * What the live OTLP export (`OtlpStreamer`, stream.ts) shows and takes.
 *
 * @module
 */
import type { OtlpProtocol } from "./send.ts";

/** What `/health` and `status` show of the live export. */
export interface OtlpStreamStatus {
  /** The collector. */
  endpoint: string;
  /** Stored events whose spans the collector has not accepted yet. */
  lag_events: number;
  /** Spans the collector accepted. */
  sent_spans: number;
  /** Requests that failed and will be tried again (after a backoff). */
  retries: number;
  /** The last failure, or null once a round went through after it. */
  last_error: string | null;
  /** When a round last went through (ISO), or null. */
  last_success: string | null;
  /**
   * Events wait and no round has gone through for `stallAfterMs`: the
   * collector is down or refuses (`/health` then says `ok: false`).
   */
  stalled: boolean;
  /** Spans built and waiting to be sent now. */
  buffered_spans: number;
  /** The most spans that ever waited at once. */
  peak_buffered_spans: number;
  /** Spans per request: what waits is this, plus what one event finishes. */
  buffer_limit: number;
}

/** Options of an {@linkcode OtlpStreamer}. */
export interface OtlpStreamerOptions {
  /** Spans per request, and the most read ahead of the collector. @default 100 */
  batchSpans?: number;
  /** Milliseconds between rounds when caught up and not woken. @default 1000 */
  intervalMs?: number;
  /** Extra headers (API keys). */
  headers?: Record<string, string>;
  /** Body encoding. @default "http/json" */
  protocol?: OtlpProtocol;
  /** Longest argument or result value, in characters. @default 8192 */
  maxValueChars?: number;
  /** First backoff after a failed round, in milliseconds (doubled per failure). @default 250 */
  backoffMs?: number;
  /** Longest backoff, in milliseconds. @default 10000 */
  maxBackoffMs?: number;
  /** Milliseconds with events waiting and no round through before the stream counts as stalled. @default 30000 */
  stallAfterMs?: number;
  /** Milliseconds a request may take before it counts as failed. @default 10000 */
  requestTimeoutMs?: number;
  /** Open episodes and calls held per capture. @default 10000 */
  maxOpen?: number;
  /** Captures whose builders stay in memory (others are rebuilt from their cursor). @default 64 */
  maxBuilders?: number;
  /** Events read from one capture per round before the next capture's turn. @default 5000 */
  eventsPerRound?: number;
}
