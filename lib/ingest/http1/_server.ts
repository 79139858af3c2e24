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
import { ByteReader } from "./_reader.ts";
import type { IngestAnswer, IngestRequest } from "./_exchange.ts";
import {
  answerAndClose,
  AnswerEncoder,
  writeAll,
  writeAndClose,
} from "./_response.ts";
import { within } from "./_deadline.ts";
import {
  BufferedRequest,
  HttpProtocolError,
  readHead,
  readRequestBody,
  tooLarge,
} from "./_request.ts";
import type { RequestHead } from "./_head.ts";
import {
  type ConnectionStats,
  type Http1ServerOptions,
  withDefaults,
} from "./_options.ts";
import { type Connection, ConnectionPool } from "./_pool.ts";
import { BodyBudget, type Holding } from "./_body_budget.ts";
import { streamPieces, writeStreamedAnswer } from "./_stream_answer.ts";

/** After an error answer, how long to drop the rest. */
const LINGER_MS = 1000;
const CONTINUE = new TextEncoder().encode("HTTP/1.1 100 Continue\r\n\r\n");

/** An HTTP/1.1 server with a connection cap and time-outs. */
export class Http1Server {
  readonly #handler: (req: IngestRequest) => Promise<IngestAnswer>;
  readonly #options: Required<Http1ServerOptions>;
  readonly #listener: Deno.TcpListener;
  readonly #pool: ConnectionPool;
  readonly #running = new Set<Promise<void>>();
  readonly #sweeper: ReturnType<typeof setInterval>;
  readonly #accepting: Promise<void>;
  #closing = false;
  readonly #budget: BodyBudget;
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
    const o = this.#options = withDefaults(options);
    this.#encoder = new AnswerEncoder(o.idleTimeoutMs);
    // Deno 2.9.6 computes the main thread's stack limit (reading
    // /proc/self/maps) the first time a stack trace is formatted, and panics
    // when that happens while the process is out of file handles. Format one
    // now, while handles are free.
    void new Error("warm-up").stack;
    this.#listener = Deno.listen({
      hostname: options.hostname,
      port: options.port,
    });
    this.#pool = new ConnectionPool(o.maxConnections);
    this.stats = this.#pool.stats;
    this.#budget = new BodyBudget({
      maxBytes: o.maxBufferedBodyBytes,
      stats: this.stats,
    });
    const tick = Math.min(
      1000,
      Math.max(
        20,
        Math.min(o.idleTimeoutMs, o.headersTimeoutMs, o.requestTimeoutMs) / 4,
      ),
    );
    this.#sweeper = setInterval(() => this.#pool.sweep(), tick);
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
      this.#pool.closeUnanswering();
    }
    await this.#accepting;
    // The sweeper still times out answers a client does not take up.
    while (this.#running.size > 0) await Promise.all(this.#running);
    clearInterval(this.#sweeper);
  }

  async #accept(): Promise<void> {
    const pool = this.#pool;
    for (;;) {
      let conn: Deno.TcpConn;
      try {
        conn = await this.#listener.accept();
      } catch (err) {
        if (this.#closing || err instanceof Deno.errors.BadResource) return;
        // Out of file handles, most likely. From now on keep the
        // connections a reserve below where that happened, so that the
        // store (spools, index) and the runtime keep handles to work with;
        // close idle ones to get there, and wait a little when none is idle.
        this.stats.accept_errors++;
        this.stats.last_accept_error = String(err);
        pool.learnHandleCap();
        let freed = false;
        while (pool.size > pool.cap() && pool.evictIdle()) freed = true;
        await new Promise((r) => setTimeout(r, freed ? 0 : 100));
        continue;
      }
      if (this.#closing) {
        conn.close();
        return;
      }
      this.stats.accepted++;
      if (pool.size >= pool.cap() && !pool.evictIdle()) {
        this.#refuse(conn);
        continue;
      }
      const c = pool.add(conn, this.#options.idleTimeoutMs);
      const run = this.#serve(c).finally(() => {
        pool.remove(c);
        this.#running.delete(run);
      });
      this.#running.add(run);
    }
  }

  /** Answer 503 and close, without reading (at the cap, none idle). */
  #refuse(conn: Deno.TcpConn): void {
    this.stats.refused++;
    const res = this.#options.protocolError(
      new HttpProtocolError(
        503,
        `The ingest server has ${this.#pool.size} connections open: retry shortly`,
      ),
      null,
    );
    res.headers["retry-after"] = "1";
    const run = writeAndClose(
      conn,
      this.#encoder.encode(res, { keepAlive: false, head: null }),
    ).finally(() => this.#running.delete(run));
    this.#running.add(run);
  }

  /** One connection: requests one after another until it closes. */
  async #serve(c: Connection): Promise<void> {
    try {
      c.conn.setNoDelay(true);
    } catch {
      return;
    }
    const reader = new ByteReader((into) => c.conn.read(into));
    const held: Holding = { bytes: 0, late: false };
    let head: RequestHead | null = null;
    try {
      for (;;) {
        head = null;
        head = await this.#nextHead(c, reader);
        if (head === null) return;
        const body = await this.#readBody(c, reader, head, held);
        if (!await this.#respond(c, reader, head, body, held)) return;
      }
    } catch (err) {
      if (c.closed || !(err instanceof HttpProtocolError)) return;
      await this.#refuseRequest(c, err, head, held);
    } finally {
      this.#budget.release(held);
    }
  }

  /**
   * Wait (idle) for the next request's first byte, then read its head.
   *
   * @returns The head, or null when the connection ends or the server stops.
   */
  async #nextHead(
    c: Connection,
    reader: ByteReader,
  ): Promise<RequestHead | null> {
    const o = this.#options;
    c.since = Date.now();
    this.#pool.enter(c, "idle", o.idleTimeoutMs);
    if (reader.buffered === 0 && !await reader.fill()) return null;
    if (this.#closing) return null;
    const started = Date.now();
    this.#pool.enter(c, "head", o.headersTimeoutMs);
    const head = await readHead(reader, o.maxHeadBytes);
    if (head === null) return null;
    // The whole request is due `requestTimeoutMs` after its first byte.
    c.state = "body";
    c.deadline = started + o.requestTimeoutMs;
    return head;
  }

  /** Read a request's body within the body limit and the memory budget. */
  async #readBody(
    c: Connection,
    reader: ByteReader,
    head: RequestHead,
    held: Holding,
  ): Promise<Uint8Array<ArrayBuffer>> {
    const o = this.#options;
    const length = head.contentLength ?? 0;
    if (length > o.maxBodyBytes) throw tooLarge(o.maxBodyBytes);
    if (length > 0) this.#budget.reserve(held, length);
    if (head.expectContinue) await writeAll(c.conn, CONTINUE);
    return await readRequestBody(reader, {
      head,
      limit: o.maxBodyBytes,
      reserve: (bytes) => this.#budget.reserve(held, bytes),
    });
  }

  /**
   * Run the handler within its time-out and write its answer.
   *
   * @returns Whether the connection serves another request.
   * @throws {HttpProtocolError} 503 when the handler is late.
   */
  async #respond(
    c: Connection,
    reader: ByteReader,
    head: RequestHead,
    body: Uint8Array<ArrayBuffer>,
    held: Holding,
  ): Promise<boolean> {
    const o = this.#options;
    c.state = "busy";
    c.deadline = Infinity;
    const keepAlive = head.keepAlive && !this.#closing;
    const request = new BufferedRequest(head, body);
    const long = o.longRunning(head.method, head.target);
    if (long) {
      // The client going away aborts what the handler does for it.
      const gone = new AbortController();
      request.signal = gone.signal;
      reader.watch().then((alive) => {
        if (!alive) gone.abort(new Error("The client closed the connection"));
      });
    }
    const work = this.#answer(request);
    const res = long ? await work : await within(work, o.handlerTimeoutMs);
    if (res === null) {
      // The body stays in memory until the handler lets go of it.
      this.#budget.releaseWhenDone(held, work);
      this.stats.handler_timed_out++;
      held.late = true;
      throw new HttpProtocolError(
        503,
        `The request was not answered within ${o.handlerTimeoutMs} ms (the server is still working on it): check the server, then retry`,
      );
    }
    this.#pool.enter(c, "write", o.requestTimeoutMs);
    const again = keepAlive && !this.#closing;
    const bytes = this.#encoder.encode(res, { keepAlive: again, head });
    const pieces = res.pieces ??
      (res.stream ? streamPieces(res.stream) : undefined);
    if (pieces === undefined || head.method === "HEAD") {
      await pieces?.cancel().catch(() => {});
      await writeAll(c.conn, bytes);
      this.#budget.release(held);
      return again;
    }
    this.#budget.release(held);
    return await writeStreamedAnswer(c, {
      headBytes: bytes,
      pieces,
      enterWrite: () => this.#pool.enter(c, "write", o.requestTimeoutMs),
    }) && again;
  }

  /**
   * A malformed request (or one over the body budget, or late): say why,
   * then close (the rest of the stream is unread).
   */
  async #refuseRequest(
    c: Connection,
    err: HttpProtocolError,
    head: RequestHead | null,
    held: Holding,
  ): Promise<void> {
    if (err.status !== 503) this.stats.malformed++;
    this.#pool.enter(c, "write", this.#options.requestTimeoutMs);
    const res = this.#options.protocolError(err, head);
    if (err.status === 503 && !held.late) res.headers["retry-after"] = "1";
    this.#budget.release(held);
    // The sweeper ends the linger after LINGER_MS.
    await answerAndClose(c.conn, {
      bytes: this.#encoder.encode(res, { keepAlive: false, head }),
      lingering: () => this.#pool.enter(c, "write", LINGER_MS),
    });
  }

  async #answer(request: BufferedRequest): Promise<IngestAnswer> {
    try {
      return await this.#handler(request);
    } catch (err) {
      return this.#options.onError(err);
    }
  }
}
