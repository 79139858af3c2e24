/**
 * Options of {@linkcode Http1Server} (`lib/ingest/http1/_server.ts`) and the
 * counters it keeps, with their defaults.
 *
 * @module
 */
import type { IngestAnswer } from "./_exchange.ts";
import type { HttpProtocolError } from "./_errors.ts";
import type { RequestHead } from "./_head.ts";

/** Options of `Http1Server`. */
export interface Http1ServerOptions {
  /** Address to bind. */
  hostname: string;
  /** Port to bind (0 picks a free one). */
  port: number;
  /** Largest request body, in bytes (413 past it). */
  maxBodyBytes: number;
  /**
   * Connections open at once.
   * @default DEFAULT_MAX_CONNECTIONS
   */
  maxConnections?: number;
  /**
   * Idle keep-alive (or silent new) connections are closed after this.
   * @default 15000
   */
  idleTimeoutMs?: number;
  /**
   * A request head must be complete this long after its first byte.
   * @default 10000
   */
  headersTimeoutMs?: number;
  /**
   * The whole request must arrive, and the response be taken up, within
   * this.
   * @default 60000
   */
  requestTimeoutMs?: number;
  /**
   * The handler must answer within this; past it the request is answered
   * 503 and the connection closed.
   * @default 30000
   */
  handlerTimeoutMs?: number;
  /**
   * Request body bytes held in memory at once, over all connections (at
   * least `maxBodyBytes`); a request past it gets 503 with `Retry-After`.
   * @default 67108864 (64 MiB)
   */
  maxBufferedBodyBytes?: number;
  /**
   * Largest request head, in bytes (431 past it).
   * @default 16384
   */
  maxHeadBytes?: number;
  /**
   * Whether a request may take as long as its handler needs (model API
   * calls): no handler time-out, and its `signal` aborts when the client
   * goes away. The handler bounds such requests itself.
   * @default () => false
   */
  longRunning?: (method: string, target: string) => boolean;
  /** Answer for an error the handler threw. */
  onError: (err: unknown) => IngestAnswer;
  /**
   * Answer for a request refused before its handler: not well-formed HTTP,
   * over a limit, late, or the connection cap (the error holds the status;
   * the head, when it was read, lets the answer take its route's shape).
   */
  protocolError: (
    err: HttpProtocolError,
    head: RequestHead | null,
  ) => IngestAnswer;
}

/** Connection counters (shown on the ingest server's `/health`). */
export interface ConnectionStats {
  /** Connections open now. */
  open: number;
  /** Of those, connections past their request's first byte, not yet answered. */
  in_request: number;
  /** Request body bytes held in memory now, over all connections. */
  body_bytes_held: number;
  /** The cap. */
  max: number;
  /** Connections accepted in all. */
  accepted: number;
  /** New connections answered 503 at the cap (none idle to close). */
  refused: number;
  /** Idle connections closed to make room (cap, or out of handles). */
  evicted: number;
  /** Connections closed because they were idle too long. */
  idle_closed: number;
  /** Connections closed because a request or a response took too long. */
  timed_out: number;
  /** Requests refused as malformed HTTP (4xx/5xx, connection closed). */
  malformed: number;
  /** Requests answered 503 because bodies in memory reached the budget. */
  over_body_budget: number;
  /** Requests answered 503 because the handler took too long. */
  handler_timed_out: number;
  /** Times `accept` failed (e.g. out of file handles). */
  accept_errors: number;
  /** Why it last failed. */
  last_accept_error?: string;
  /**
   * Connections allowed since the process ran out of file handles: a
   * reserve below where it happened (dropped a minute after the last).
   */
  handle_cap?: number;
}

/**
 * Connections open at once by default: four times the requests handled at
 * once (256). A client's pool opens more connections than it has requests
 * under way: one whose answer just ended is not back in its pool when the
 * next request goes, so a new one opens. At the cap the server closes the
 * longest-idle connection for a new one, and a client sending on it at
 * that moment sees its request cut ("connection closed before message
 * completed"): 256 concurrent streams through a cap of 256 had 145
 * connections closed so and a request cut (issue 45). The file handles
 * are there: Deno raises the soft limit to the hard one, and past the
 * handles the process has, the listener keeps a reserve below
 * (`handle_cap`).
 */
export const DEFAULT_MAX_CONNECTIONS = 1024;

/** How long a handler may take to answer by default (ms). */
export const DEFAULT_HANDLER_TIMEOUT_MS = 30_000;

/**
 * The options with every default filled in.
 *
 * @param options As given.
 * @returns Every field set (the body budget at least `maxBodyBytes`).
 */
export function withDefaults(
  options: Http1ServerOptions,
): Required<Http1ServerOptions> {
  return {
    ...options,
    maxConnections: options.maxConnections ?? DEFAULT_MAX_CONNECTIONS,
    idleTimeoutMs: options.idleTimeoutMs ?? 15_000,
    headersTimeoutMs: options.headersTimeoutMs ?? 10_000,
    requestTimeoutMs: options.requestTimeoutMs ?? 60_000,
    handlerTimeoutMs: options.handlerTimeoutMs ?? DEFAULT_HANDLER_TIMEOUT_MS,
    longRunning: options.longRunning ?? (() => false),
    maxHeadBytes: options.maxHeadBytes ?? 16 * 1024,
    maxBufferedBodyBytes: Math.max(
      options.maxBufferedBodyBytes ?? 64 * 1024 * 1024,
      options.maxBodyBytes,
    ),
  };
}
