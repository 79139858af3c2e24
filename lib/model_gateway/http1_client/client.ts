/**
 * {@linkcode Http1Client}: the gateway's own HTTP/1.1 client for upstreams
 * on this machine (plain `http:` to a loopback address: a local model
 * server, another gateway, the benchmark's upstream). Per exchange it does
 * one write and reads the answer into one buffer per connection, where
 * `fetch` builds a `Request`, a `Response` and a byte stream per request and
 * runs the stream machinery per piece (issue 45: about 58 µs of CPU per
 * instant request, and half the client's CPU per relayed stream). Remote
 * upstreams stay on `fetch`: TLS, HTTP proxies and compression are its.
 *
 * Connections are kept per host for {@linkcode IDLE_MS}, each idle one with
 * a read under way, so one the upstream closes leaves the pool at once.
 *
 * @module
 */
import type { UpstreamResponse } from "../upstream_response.ts";
import { BodyPieces, readAll } from "../body_pieces.ts";
import { MalformedAnswerError, parseAnswerHead } from "./answer_head.ts";
import { ConnBody, type Framing } from "./answer_body.ts";
import { ConnReader } from "./conn_reader.ts";

/** How long a connection is kept idle. */
export const IDLE_MS = 4_000;
/** Most idle connections kept per host. */
const MAX_IDLE = 256;
/** Largest answer head. */
const MAX_HEAD = 64 * 1024;

const ENC = new TextEncoder();
const HEAD_DECODER = new TextDecoder();

/** A request for {@linkcode Http1Client.send}. */
export interface ClientCall {
  /** The URL (`http:`, a loopback host: see {@linkcode Http1Client.takes}). */
  url: URL;
  /** Method. */
  method: string;
  /** Header fields to send (no hop-by-hop ones, no `host`). */
  headers: Headers;
  /** Body bytes or text, or null. */
  body: Uint8Array | string | null;
  /** Aborts the exchange (the connection is closed). */
  signal: AbortSignal;
}

interface Kept {
  conn: Deno.TcpConn;
  reader: ConnReader;
  key: string;
  idle: boolean;
  idleSince: number;
  /** Counts the times it went idle (a watch belongs to one of them). */
  turn: number;
}

const LOOPBACK = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|localhost|\[::1\])$/i;

/** The gateway's HTTP/1.1 client for loopback upstreams. */
export class Http1Client {
  readonly #idle = new Map<string, Kept[]>();
  readonly #open = new Set<Kept>();
  #sweep: number | undefined;
  #closed = false;

  /**
   * Whether this client takes a URL: plain `http:` to a loopback host.
   *
   * @param url The upstream URL.
   * @returns True when it does.
   */
  static takes(url: URL): boolean {
    return url.protocol === "http:" && LOOPBACK.test(url.hostname);
  }

  /** Connections open now (idle or in use). */
  get open(): number {
    return this.#open.size;
  }

  /**
   * Send a request and read the answer's head.
   *
   * @param call The request.
   * @returns The answer, its body not read yet.
   * @throws What the connection threw, an {@linkcode MalformedAnswerError},
   *   or the signal's reason once it aborted.
   */
  async send(call: ClientCall): Promise<UpstreamResponse> {
    if (this.#closed) {
      throw new Error("The gateway's upstream client is closed");
    }
    const url = call.url;
    const signal = call.signal;
    // A connect can hang (an upstream whose accept queue is full drops the
    // handshake): the signal ends the wait, and a connection that comes
    // after it is closed.
    const k = this.#take(url.host) ??
      await untilAborted(
        this.#connect(url),
        signal,
        (late) => this.#drop(late),
      );
    if (signal.aborted) {
      this.#drop(k);
      throw signal.reason;
    }
    const onAbort = () => this.#drop(k);
    signal.addEventListener("abort", onAbort, { once: true });
    const done = (reusable: boolean) => {
      signal.removeEventListener("abort", onAbort);
      if (reusable) this.#release(k);
      else this.#drop(k);
    };
    try {
      await writeAll(k.conn, requestBytes(url, call));
      let head = parseAnswerHead(
        HEAD_DECODER.decode(await k.reader.head(MAX_HEAD)),
      );
      // Interim answers (100 Continue, 103 Early Hints) come before the answer.
      while (head.status < 200 && head.status !== 101) {
        head = parseAnswerHead(
          HEAD_DECODER.decode(await k.reader.head(MAX_HEAD)),
        );
      }
      const h = head.headers;
      const framing = framingOf(call.method, head.status, h);
      const reusable = head.http11 &&
        !/(^|,)\s*close\s*(,|$)/i.test(h.get("connection") ?? "") &&
        framing?.kind !== "close";
      if (framing === null) {
        done(reusable);
        return { status: head.status, headers: h, body: null, bytes: empty };
      }
      const body = new ConnBody(
        k.reader,
        framing,
        (ended) => done(ended && reusable),
      );
      const coding = (h.get("content-encoding") ?? "").trim().toLowerCase();
      if (coding !== "" && coding !== "identity") {
        return {
          status: head.status,
          headers: h,
          ...decoded(body, coding),
        };
      }
      return {
        status: head.status,
        headers: h,
        body,
        bytes: () => body.bytes(),
      };
    } catch (err) {
      done(false);
      if (signal.aborted) throw signal.reason;
      throw err;
    }
  }

  /** Close every connection (the gateway stops). */
  close(): void {
    this.#closed = true;
    if (this.#sweep !== undefined) clearTimeout(this.#sweep);
    this.#sweep = undefined;
    for (const k of [...this.#open]) this.#drop(k);
  }

  async #connect(url: URL): Promise<Kept> {
    const hostname = url.hostname.replace(/^\[(.*)\]$/, "$1");
    const conn = await Deno.connect({
      hostname,
      port: url.port ? Number(url.port) : 80,
    });
    conn.setNoDelay(true);
    const k: Kept = {
      conn,
      reader: new ConnReader(conn),
      key: url.host,
      idle: false,
      idleSince: 0,
      turn: 0,
    };
    if (this.#closed) {
      conn.close();
      throw new Error("The gateway's upstream client is closed");
    }
    this.#open.add(k);
    return k;
  }

  /** The most recently idle connection to `key` still fresh, if any. */
  #take(key: string): Kept | null {
    const list = this.#idle.get(key);
    if (!list) return null;
    const now = Date.now();
    for (let k = list.pop(); k; k = list.pop()) {
      k.idle = false;
      if (now - k.idleSince < IDLE_MS) return k;
      this.#drop(k);
    }
    return null;
  }

  #release(k: Kept): void {
    const list = this.#idle.get(k.key) ?? [];
    if (this.#closed || list.length >= MAX_IDLE) return this.#drop(k);
    this.#idle.set(k.key, list);
    k.idle = true;
    k.idleSince = Date.now();
    const turn = ++k.turn;
    list.push(k);
    // Bytes or an end while idle: the upstream closed it (or broke the
    // protocol); either way it carries no more requests.
    k.reader.watch().then(() => {
      if (k.idle && k.turn === turn) this.#drop(k);
    });
    if (this.#sweep === undefined) this.#armSweep();
  }

  #armSweep(): void {
    // A number in Deno (Node's types call it a Timeout object).
    const timer = Number(setTimeout(() => {
      this.#sweep = undefined;
      const now = Date.now();
      let left = 0;
      for (const list of this.#idle.values()) {
        for (const k of [...list]) {
          if (now - k.idleSince >= IDLE_MS) this.#drop(k);
        }
        left += list.length;
      }
      if (left > 0 && !this.#closed) this.#armSweep();
    }, IDLE_MS));
    // Idle connections keep no process alive.
    Deno.unrefTimer(timer);
    this.#sweep = timer;
  }

  #drop(k: Kept): void {
    if (!this.#open.delete(k)) return;
    if (k.idle) {
      k.idle = false;
      const list = this.#idle.get(k.key);
      const i = list?.indexOf(k) ?? -1;
      if (i >= 0) list!.splice(i, 1);
    }
    try {
      k.conn.close();
    } catch {
      // Closed already.
    }
  }
}

/**
 * `p`, or the signal's reason once it aborts first (`late` then gets what
 * `p` brings, if anything).
 */
function untilAborted<T>(
  p: Promise<T>,
  signal: AbortSignal,
  late: (value: T) => void,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
    p.then((value) => {
      signal.removeEventListener("abort", onAbort);
      if (signal.aborted) late(value);
      else resolve(value);
    }, (err) => {
      signal.removeEventListener("abort", onAbort);
      reject(err);
    });
  });
}

/** No body. */
function empty(): Promise<Uint8Array> {
  return Promise.resolve(new Uint8Array(0));
}

/**
 * How the answer's body ends, or null when it has none (RFC 9112 §6.3).
 *
 * @throws {MalformedAnswerError} An invalid length or coding.
 */
function framingOf(
  method: string,
  status: number,
  h: { get(name: string): string | null },
): Framing | null {
  if (method === "HEAD" || status === 204 || status === 304) return null;
  const te = h.get("transfer-encoding");
  if (te !== null) {
    if (!/(^|,)\s*chunked\s*$/i.test(te)) {
      throw new MalformedAnswerError(`the transfer coding ${te}`);
    }
    return { kind: "chunked" };
  }
  const cl = h.get("content-length");
  if (cl !== null) {
    if (!/^\d{1,15}$/.test(cl.trim())) {
      throw new MalformedAnswerError(`the content length ${cl}`);
    }
    return { kind: "length", bytes: Number(cl.trim()) };
  }
  return { kind: "close" };
}

/** A body in a content coding, decoded as it is read. */
function decoded(
  body: ConnBody,
  coding: string,
): Pick<UpstreamResponse, "body" | "bytes"> {
  const format = coding === "gzip" || coding === "x-gzip"
    ? "gzip"
    : coding === "deflate"
    ? "deflate"
    : null;
  if (format === null) {
    void body.cancel();
    throw new MalformedAnswerError(
      `its content coding ${coding} (the gateway asks for none, and decodes gzip and deflate)`,
    );
  }
  const source = new ReadableStream<Uint8Array<ArrayBuffer>>({
    async pull(ctrl) {
      const piece = await body.read() as Uint8Array<ArrayBuffer> | null;
      if (piece === null) ctrl.close();
      else ctrl.enqueue(piece);
    },
    cancel: () => body.cancel(),
  });
  const stream = source.pipeThrough(new DecompressionStream(format));
  const pieces = new BodyPieces(stream);
  return {
    body: pieces,
    bytes: () => readAll(pieces),
  };
}

/** The request's bytes: head and body, for one write. */
function requestBytes(url: URL, call: ClientCall): Uint8Array {
  let head =
    `${call.method} ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\n`;
  let accept = false;
  call.headers.forEach((v, k) => {
    if (k === "host") return;
    if (k === "accept") accept = true;
    head += `${k}: ${v}\r\n`;
  });
  if (!accept) head += "accept: */*\r\n";
  const body = typeof call.body === "string"
    ? ENC.encode(call.body)
    : call.body ?? new Uint8Array(0);
  if (body.length > 0 || call.method !== "GET" && call.method !== "HEAD") {
    head += `content-length: ${body.length}\r\n`;
  }
  head += "\r\n";
  // Header values are byte strings: bytes past 0x7f go as one byte each.
  const headBytes = /[\u0080-\uffff]/.test(head)
    ? Uint8Array.from(head, (c) => c.charCodeAt(0))
    : ENC.encode(head);
  const out = new Uint8Array(headBytes.length + body.length);
  out.set(headBytes);
  out.set(body, headBytes.length);
  return out;
}

/** Write all of `bytes`. */
async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  for (let at = 0; at < bytes.length;) {
    at += await conn.write(bytes.subarray(at));
  }
}
