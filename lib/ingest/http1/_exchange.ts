/**
 * What a handler of the listener sees of HTTP: an {@linkcode IngestRequest}
 * in, an {@linkcode IngestAnswer} out. The listener builds requests straight
 * from the bytes it read (no `Request`, no body stream: they were a fifth of
 * the server's CPU per event).
 *
 * @module
 */

/** One request, as the ingest handler reads it. */
export interface IngestRequest {
  /** Method, e.g. `POST`. */
  readonly method: string;
  /** Path and query as sent, e.g. `/hook/host_a?cap=c1`. */
  readonly target: string;
  /**
   * A header's value.
   *
   * @param name Lower-case name.
   * @returns The value (repeated headers joined with `, `), or null.
   */
  header(name: string): string | null;
  /**
   * The body as text.
   *
   * @param limit Most bytes accepted.
   * @returns The text.
   * @throws {PayloadTooLargeError} Past `limit`.
   * @throws {SyntaxError} When it is not UTF-8.
   */
  text(limit: number): Promise<string>;
  /**
   * Every header as sent (lower-case names, in order; repeated ones
   * separately).
   *
   * @returns Name and value pairs.
   */
  headers?(): Iterable<[string, string]>;
  /**
   * The body's bytes as they came.
   *
   * @param limit Most bytes accepted.
   * @returns The bytes.
   * @throws {PayloadTooLargeError} Past `limit`.
   */
  bytes?(limit: number): Promise<Uint8Array>;
  /** Drop the body unread. */
  discard(): Promise<void>;
  /**
   * Aborted when the client goes away before the answer is complete; set
   * only for long-running routes (the listener's `longRunning`).
   */
  readonly signal?: AbortSignal;
}

/** One answer of the ingest handler. */
export interface IngestAnswer {
  /** HTTP status. */
  status: number;
  /** Header names (lower case) and values. */
  headers: Record<string, string>;
  /** Body text, or null for none. */
  body: string | null;
  /** Body bytes, sent as they are (instead of `body`). */
  raw?: Uint8Array;
  /**
   * A body streamed as it is produced (instead of `body`), sent with
   * `Transfer-Encoding: chunked`, one chunk per piece read; cancelled when
   * the client goes away.
   */
  stream?: ReadableStream<Uint8Array>;
  /**
   * A body streamed as it is produced, read by the listener itself (no
   * stream in between: a relay's cheaper form of `stream`), sent the same
   * way; cancelled when the client goes away.
   */
  pieces?: AnswerPieces;
}

/**
 * A streamed answer's body, piece by piece: the listener asks for the next
 * piece once the last one is copied into its chunk, so a piece may live in
 * a buffer its source reuses.
 */
export interface AnswerPieces {
  /**
   * The next piece.
   *
   * @returns It (valid until the next call), or null at the end.
   */
  read(): Promise<Uint8Array | null>;
  /**
   * Stop: the client went away, or a write failed.
   *
   * @param reason Why.
   */
  cancel(reason?: unknown): Promise<void>;
}
