/**
 * {@linkcode Http1Server}: the ingest server's own HTTP/1.1 listener over
 * `Deno.listen`, with what `Deno.serve` does not offer: a connection cap,
 * time-outs for idle, slow and stalled connections, and an accept loop that
 * survives running out of file handles.
 *
 * - At the cap, a new connection takes the place of the longest-idle
 *   keep-alive connection; when none is idle it is answered 503 and closed.
 * - An idle connection is closed after `idleTimeoutMs`; a request head must
 *   arrive within `headersTimeoutMs` of its first byte, the whole request
 *   within `requestTimeoutMs`, and a response must be taken up by the client
 *   within `requestTimeoutMs`. A handler that has not answered within
 *   `handlerTimeoutMs` gets its request answered 503 and the connection
 *   closed (the handler runs on; its body stays counted until it ends).
 * - When `accept` fails (out of file handles), connections are kept 16
 *   below where that happened (longest-idle ones closed first), so that the
 *   store keeps handles to work with; the full cap is tried again a minute
 *   after the last shortage.
 *
 * Requests reach the handler read whole (a `Content-Length` or chunked
 * body, in memory, within `maxBodyBytes` and the memory budget; other
 * transfer codings get 411 before their body is read); answers are written
 * with a `Content-Length`.
 *
 * @module
 */
import { ByteReader } from "./http1_reader.ts";
import type { IngestAnswer, IngestRequest } from "./exchange.ts";
import {
  answerAndClose,
  AnswerEncoder,
  writeAll,
  writeAndClose,
} from "./http1_response.ts";
import { within } from "./http1_deadline.ts";
import {
  BufferedRequest,
  HttpProtocolError,
  readHead,
  readRequestBody,
  type RequestHead,
  tooLarge,
} from "./http1_request.ts";
import {
  type ConnectionStats,
  type Http1ServerOptions,
  withDefaults,
} from "./http1_options.ts";

export type { ConnectionStats, Http1ServerOptions } from "./http1_options.ts";
export { DEFAULT_HANDLER_TIMEOUT_MS } from "./http1_options.ts";

type State = "idle" | "head" | "body" | "busy" | "write";

interface Connection {
  conn: Deno.TcpConn;
  state: State;
  /** When the current state times out (ms since the epoch). */
  deadline: number;
  /** When it became idle. */
  since: number;
  closed: boolean;
}

/** Handles kept free below the connection count where accept failed. */
const HANDLE_RESERVE = 16;
/** How long a learned handle cap holds after the last shortage. */
const HANDLE_CAP_MS = 60_000;
/** After an error answer, how long to drop the rest. */
const LINGER_MS = 1000;
const CONTINUE = new TextEncoder().encode("HTTP/1.1 100 Continue\r\n\r\n");

/** An HTTP/1.1 server with a connection cap and time-outs. */
export class Http1Server {
  readonly #handler: (req: IngestRequest) => Promise<IngestAnswer>;
  readonly #options: Required<Http1ServerOptions>;
  readonly #listener: Deno.TcpListener;
  readonly #connections = new Set<Connection>();
  readonly #running = new Set<Promise<void>>();
  readonly #sweeper: ReturnType<typeof setInterval>;
  readonly #accepting: Promise<void>;
  #closing = false;
  /** When the handle cap was last learned. */
  #handleCapAt = 0;
  /** Body bytes in memory now (reserved while read, until answered). */
  #buffered = 0;
  readonly #encoder: AnswerEncoder;
  /** Counters. */
  readonly stats: ConnectionStats;

  /**
   * Bind and start accepting.
   *
   * @param handler Answers each request.
   * @param options Address, limits and time-outs.
   * @throws {Deno.errors.AddrInUse} When the port is taken.
   */
  constructor(
    handler: (req: IngestRequest) => Promise<IngestAnswer>,
    options: Http1ServerOptions,
  ) {
    this.#handler = handler;
    this.#options = withDefaults(options);
    this.#encoder = new AnswerEncoder(this.#options.idleTimeoutMs);
    // Deno 2.9.6 computes the main thread's stack limit (reading
    // /proc/self/maps) the first time a stack trace is formatted, and panics
    // when that happens while the process is out of file handles. Format one
    // now, while handles are free.
    void new Error("warm-up").stack;
    this.#listener = Deno.listen({
      hostname: options.hostname,
      port: options.port,
    });
    this.stats = {
      open: 0,
      max: this.#options.maxConnections,
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
    const o = this.#options;
    const tick = Math.min(
      1000,
      Math.max(
        20,
        Math.min(o.idleTimeoutMs, o.headersTimeoutMs, o.requestTimeoutMs) / 4,
      ),
    );
    this.#sweeper = setInterval(() => this.#sweep(), tick);
    this.#accepting = this.#accept();
  }

  /** The bound address. */
  get addr(): Deno.NetAddr {
    return this.#listener.addr;
  }

  /**
   * Stop accepting, close connections that are not in the middle of an
   * answer, and wait for those that are.
   */
  async shutdown(): Promise<void> {
    if (!this.#closing) {
      this.#closing = true;
      try {
        this.#listener.close();
      } catch {
        // Already closed.
      }
      for (const c of this.#connections) {
        if (c.state !== "busy" && c.state !== "write") this.#close(c);
      }
    }
    await this.#accepting;
    // The sweeper still times out answers a client does not take up.
    while (this.#running.size > 0) await Promise.all(this.#running);
    clearInterval(this.#sweeper);
  }

  async #accept(): Promise<void> {
    for (;;) {
      let conn: Deno.TcpConn;
      try {
        conn = await this.#listener.accept();
      } catch (err) {
        if (this.#closing || err instanceof Deno.errors.BadResource) return;
        // Out of file handles, most likely. From now on keep the
        // connections HANDLE_RESERVE below where that happened, so that the
        // store (spools, index) and the runtime keep handles to work with;
        // close idle ones to get there, and wait a little when none is idle.
        this.stats.accept_errors++;
        this.stats.last_accept_error = String(err);
        this.#learnHandleCap();
        let freed = false;
        while (this.#connections.size > this.#cap() && this.#evictIdle()) {
          freed = true;
        }
        await new Promise((r) => setTimeout(r, freed ? 0 : 100));
        continue;
      }
      if (this.#closing) {
        conn.close();
        return;
      }
      this.stats.accepted++;
      if (this.#connections.size >= this.#cap() && !this.#evictIdle()) {
        this.#refuse(conn);
        continue;
      }
      const c: Connection = {
        conn,
        state: "idle",
        deadline: Date.now() + this.#options.idleTimeoutMs,
        since: Date.now(),
        closed: false,
      };
      this.#connections.add(c);
      this.stats.open = this.#connections.size;
      const run = this.#serve(c).finally(() => {
        this.#close(c);
        this.#connections.delete(c);
        this.stats.open = this.#connections.size;
        this.#running.delete(run);
      });
      this.#running.add(run);
    }
  }

  /** Answer 503 and close, without reading (at the cap, none idle). */
  #refuse(conn: Deno.TcpConn): void {
    this.stats.refused++;
    const res = this.#options.protocolError(
      503,
      `The ingest server has ${this.#connections.size} connections open: retry shortly`,
    );
    res.headers["retry-after"] = "1";
    const run = writeAndClose(
      conn,
      this.#encoder.encode(res, { keepAlive: false, head: null }),
    ).finally(() => this.#running.delete(run));
    this.#running.add(run);
  }

  /** Connections allowed now: the cap, or less when handles ran out. */
  #cap(): number {
    return Math.min(
      this.#options.maxConnections,
      this.stats.handle_cap ?? Infinity,
    );
  }

  /** Out of handles at this many connections: stay a reserve below it. */
  #learnHandleCap(): void {
    const cap = Math.max(1, this.#connections.size - HANDLE_RESERVE);
    this.stats.handle_cap = Math.min(this.stats.handle_cap ?? Infinity, cap);
    this.#handleCapAt = Date.now();
  }

  /** Close the longest-idle connection; false when none is idle. */
  #evictIdle(): boolean {
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
    this.#close(oldest);
    return true;
  }

  #sweep(): void {
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
      this.#close(c);
    }
  }

  #close(c: Connection): void {
    if (c.closed) return;
    c.closed = true;
    try {
      c.conn.close();
    } catch {
      // Already closed.
    }
  }

  #enter(c: Connection, state: State, timeoutMs: number): void {
    c.state = state;
    c.deadline = Date.now() + timeoutMs;
  }

  /** One connection: requests one after another until it closes. */
  async #serve(c: Connection): Promise<void> {
    const o = this.#options;
    const conn = c.conn;
    try {
      conn.setNoDelay(true);
    } catch {
      return;
    }
    const reader = new ByteReader((into) => conn.read(into));
    let head: RequestHead | null = null;
    let held = 0;
    let late = false; // the handler did not answer in time: no Retry-After
    const reserve = (bytes: number) => {
      if (this.#buffered + bytes > o.maxBufferedBodyBytes) {
        this.stats.over_body_budget++;
        throw new HttpProtocolError(
          503,
          `The ingest server holds ${this.#buffered} bytes of request bodies: retry shortly`,
        );
      }
      this.#buffered += bytes;
      held += bytes;
    };
    try {
      for (;;) {
        // Idle until the next request's first byte.
        c.since = Date.now();
        this.#enter(c, "idle", o.idleTimeoutMs);
        if (reader.buffered === 0 && !await reader.fill()) return;
        if (this.#closing) return;
        const started = Date.now();
        this.#enter(c, "head", o.headersTimeoutMs);
        head = null;
        head = await readHead(reader, o.maxHeadBytes);
        if (head === null) return;
        c.state = "body";
        c.deadline = started + o.requestTimeoutMs;
        const length = head.contentLength ?? 0;
        if (length > o.maxBodyBytes) throw tooLarge(o.maxBodyBytes);
        if (length > 0) reserve(length);
        if (head.expectContinue) await writeAll(conn, CONTINUE);
        const body = await readRequestBody(
          reader,
          head,
          o.maxBodyBytes,
          reserve,
        );
        c.state = "busy";
        c.deadline = Infinity;
        const keepAlive = head.keepAlive && !this.#closing;
        const work = this.#answer(head, body);
        const res = await within(work, o.handlerTimeoutMs);
        if (res === null) {
          // The body stays in memory until the handler lets go of it.
          const still = held;
          const release = () => {
            this.#buffered -= still;
          };
          held = 0;
          work.then(release, release);
          this.stats.handler_timed_out++;
          late = true;
          throw new HttpProtocolError(
            503,
            `The request was not answered within ${o.handlerTimeoutMs} ms (the server is still working on it): check the server, then retry`,
          );
        }
        this.#enter(c, "write", o.requestTimeoutMs);
        await writeAll(
          conn,
          this.#encoder.encode(res, {
            keepAlive: keepAlive && !this.#closing,
            head,
          }),
        );
        this.#buffered -= held;
        held = 0;
        if (!keepAlive || this.#closing) return;
      }
    } catch (err) {
      if (c.closed || !(err instanceof HttpProtocolError)) return;
      // Malformed (or over the body budget): say why, then close (the rest
      // of the stream is unread).
      if (err.status !== 503) this.stats.malformed++;
      this.#enter(c, "write", o.requestTimeoutMs);
      const res = o.protocolError(err.status, err.message);
      if (err.status === 503 && !late) res.headers["retry-after"] = "1";
      this.#buffered -= held;
      held = 0;
      // The sweeper ends the linger after LINGER_MS.
      await answerAndClose(
        conn,
        this.#encoder.encode(res, { keepAlive: false, head }),
        () => this.#enter(c, "write", LINGER_MS),
      );
    } finally {
      this.#buffered -= held;
    }
  }

  async #answer(
    head: RequestHead,
    body: Uint8Array<ArrayBuffer>,
  ): Promise<IngestAnswer> {
    try {
      return await this.#handler(new BufferedRequest(head, body));
    } catch (err) {
      return this.#options.onError(err);
    }
  }
}
