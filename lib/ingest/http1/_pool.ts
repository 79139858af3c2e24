/**
 * {@linkcode ConnectionPool}: the listener's open connections, their states
 * and deadlines, the connection cap (lowered when the process runs out of
 * file handles) and the counters shown on `/health`.
 *
 * @module
 */
import type { ConnectionStats } from "./_options.ts";

/** Where a connection is in its request. */
export type State = "idle" | "head" | "body" | "busy" | "write";

/** One open connection. */
export interface Connection {
  /** The socket. */
  conn: Deno.TcpConn;
  /** Where it is in its request. */
  state: State;
  /** When the current state times out (ms since the epoch). */
  deadline: number;
  /** When it became idle. */
  since: number;
  /** Whether it was closed. */
  closed: boolean;
}

/** Handles kept free below the connection count where accept failed. */
const HANDLE_RESERVE = 16;
/** How long a learned handle cap holds after the last shortage. */
const HANDLE_CAP_MS = 60_000;

/** The open connections and their counters. */
export class ConnectionPool {
  readonly #connections = new Set<Connection>();
  readonly #max: number;
  /** When the handle cap was last learned. */
  #handleCapAt = 0;
  /** Counters. */
  readonly stats: ConnectionStats;

  /**
   * Create a `ConnectionPool`.
   *
   * @param maxConnections The cap.
   */
  constructor(maxConnections: number) {
    this.#max = maxConnections;
    this.stats = {
      open: 0,
      in_request: 0,
      body_bytes_held: 0,
      max: maxConnections,
      accepted: 0,
      refused: 0,
      evicted: 0,
      idle_closed: 0,
      timed_out: 0,
      malformed: 0,
      over_body_budget: 0,
      handler_timed_out: 0,
      accept_errors: 0,
    };
    // A gauge read when asked (`/health`), not kept at every state change.
    Object.defineProperty(this.stats, "in_request", {
      enumerable: true,
      get: () => this.#inRequest(),
    });
  }

  #inRequest(): number {
    let n = 0;
    for (const c of this.#connections) {
      if (!c.closed && c.state !== "idle") n++;
    }
    return n;
  }

  /** Connections open now. */
  get size(): number {
    return this.#connections.size;
  }

  /**
   * Take a new connection in, idle until its first byte.
   *
   * @param conn The socket.
   * @param idleTimeoutMs How long it may stay idle.
   * @returns Its record.
   */
  add(conn: Deno.TcpConn, idleTimeoutMs: number): Connection {
    const now = Date.now();
    const c: Connection = {
      conn,
      state: "idle",
      deadline: now + idleTimeoutMs,
      since: now,
      closed: false,
    };
    this.#connections.add(c);
    this.stats.open = this.#connections.size;
    return c;
  }

  /**
   * Close a connection and forget it.
   *
   * @param c The connection.
   */
  remove(c: Connection): void {
    this.close(c);
    this.#connections.delete(c);
    this.stats.open = this.#connections.size;
  }

  /**
   * Move a connection to a state with a time-out.
   *
   * @param c The connection.
   * @param state Its new state.
   * @param timeoutMs How long it may stay there.
   */
  enter(c: Connection, state: State, timeoutMs: number): void {
    c.state = state;
    c.deadline = Date.now() + timeoutMs;
  }

  /**
   * Close a connection's socket (once).
   *
   * @param c The connection.
   */
  close(c: Connection): void {
    if (c.closed) return;
    c.closed = true;
    try {
      c.conn.close();
    } catch {
      // Already closed.
    }
  }

  /** Close every connection that is not in the middle of an answer. */
  closeUnanswering(): void {
    for (const c of this.#connections) {
      if (c.state !== "busy" && c.state !== "write") this.close(c);
    }
  }

  /** @returns Connections allowed now: the cap, or less when handles ran out. */
  cap(): number {
    return Math.min(this.#max, this.stats.handle_cap ?? Infinity);
  }

  /** Out of handles at this many connections: stay a reserve below it. */
  learnHandleCap(): void {
    const cap = Math.max(1, this.#connections.size - HANDLE_RESERVE);
    this.stats.handle_cap = Math.min(this.stats.handle_cap ?? Infinity, cap);
    this.#handleCapAt = Date.now();
  }

  /** @returns Whether the longest-idle connection was closed (false when none is idle). */
  evictIdle(): boolean {
    let oldest: Connection | null = null;
    for (const c of this.#connections) {
      if (
        c.state === "idle" && !c.closed && (!oldest || c.since < oldest.since)
      ) {
        oldest = c;
      }
    }
    if (!oldest) return false;
    this.stats.evicted++;
    this.close(oldest);
    return true;
  }

  /** Close connections past their deadline; drop a handle cap a minute old. */
  sweep(): void {
    const now = Date.now();
    // Handles may have been held by other things (spools): try the full cap
    // again a minute after the last shortage (it is learned again if not).
    if (
      this.stats.handle_cap !== undefined &&
      now - this.#handleCapAt > HANDLE_CAP_MS
    ) {
      delete this.stats.handle_cap;
    }
    for (const c of this.#connections) {
      if (c.closed || now < c.deadline) continue;
      if (c.state === "idle") this.stats.idle_closed++;
      else this.stats.timed_out++;
      this.close(c);
    }
  }
}
