/**
 * {@linkcode AnswerEncoder}: an {@linkcode IngestAnswer} as HTTP/1.1 bytes
 * (status line, headers, `Content-Length`, body) in one buffer, so that an
 * answer is one write.
 *
 * @module
 */
import type { IngestAnswer } from "./_exchange.ts";
import type { RequestHead } from "./_head.ts";

const REASONS: Record<number, string> = {
  100: "Continue",
  200: "OK",
  201: "Created",
  204: "No Content",
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  408: "Request Timeout",
  409: "Conflict",
  411: "Length Required",
  413: "Content Too Large",
  415: "Unsupported Media Type",
  417: "Expectation Failed",
  422: "Unprocessable Content",
  431: "Request Header Fields Too Large",
  500: "Internal Server Error",
  501: "Not Implemented",
  503: "Service Unavailable",
  505: "HTTP Version Not Supported",
};

/** Response headers the server writes itself. */
const OWN_HEADERS = new Set([
  "content-length",
  "connection",
  "keep-alive",
  "transfer-encoding",
  "date",
]);

const encoder = new TextEncoder();

/** Encodes answers, with a `Date` header computed once a second. */
export class AnswerEncoder {
  readonly #keepAlive: string;
  #dateSecond = -1;
  #date = "";

  /**
   * Create an `AnswerEncoder`.
   *
   * @param idleTimeoutMs The idle time-out, announced in `Keep-Alive`.
   */
  constructor(idleTimeoutMs: number) {
    this.#keepAlive = `keep-alive: timeout=${
      Math.floor(idleTimeoutMs / 1000)
    }\r\n`;
  }

  /**
   * An answer's bytes: status line, headers, body.
   *
   * @param res The answer.
   * @param options `keepAlive`: whether the connection stays open; `head`:
   *   the request's head (HEAD gets no body; HTTP/1.0 a `Connection`).
   * @returns The bytes to write.
   */
  encode(
    res: IngestAnswer,
    { keepAlive, head }: { keepAlive: boolean; head: RequestHead | null },
  ): Uint8Array {
    const status = res.status;
    let text = `HTTP/1.1 ${status} ${
      REASONS[status] ?? "Unknown"
    }\r\ndate: ${this.#httpDate()}\r\n`;
    for (const name in res.headers) {
      if (!OWN_HEADERS.has(name)) text += `${name}: ${res.headers[name]}\r\n`;
    }
    const bodyless = status === 204 || status === 304;
    const streamed = !bodyless &&
      (res.stream !== undefined || res.pieces !== undefined);
    const raw = bodyless ? null : res.raw ?? null;
    const body = bodyless || res.body === null || raw !== null
      ? null
      : res.body;
    if (streamed) text += "transfer-encoding: chunked\r\n";
    else if (!bodyless) {
      text += `content-length: ${
        raw !== null ? raw.length : body === null ? 0 : utf8Length(body)
      }\r\n`;
    }
    if (!keepAlive) text += "connection: close\r\n";
    else {
      if (head?.http10) text += "connection: keep-alive\r\n";
      text += this.#keepAlive;
    }
    text += "\r\n";
    if (head?.method === "HEAD") return encoder.encode(text);
    if (raw !== null) {
      const out = new Uint8Array(text.length + raw.length);
      const first = encoder.encodeInto(text, out).written;
      out.set(raw, first);
      return out.subarray(0, first + raw.length);
    }
    if (body === null) return encoder.encode(text);
    const out = new Uint8Array(text.length + body.length * 3);
    const first = encoder.encodeInto(text, out).written;
    const second = encoder.encodeInto(body, out.subarray(first)).written;
    return out.subarray(0, first + second);
  }

  #httpDate(): string {
    const now = Date.now();
    const second = Math.floor(now / 1000);
    if (second !== this.#dateSecond) {
      this.#dateSecond = second;
      this.#date = new Date(now).toUTCString();
    }
    return this.#date;
  }
}

/** Bytes of a string in UTF-8, without encoding it. */
function utf8Length(text: string): number {
  let n = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c < 0xdc00 && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d < 0xe000) {
        n += 2;
        i++;
      } else n += 2;
    } else n += 2;
  }
  return n;
}

/**
 * Write all of `bytes` to a connection.
 *
 * @param conn The connection.
 * @param bytes What to write.
 */
export async function writeAll(
  conn: Deno.Conn,
  bytes: Uint8Array,
): Promise<void> {
  let at = 0;
  while (at < bytes.length) at += await conn.write(bytes.subarray(at));
}

/**
 * Write `bytes`, then close the connection; never throws.
 *
 * @param conn The connection.
 * @param bytes What to write.
 */
export async function writeAndClose(
  conn: Deno.Conn,
  bytes: Uint8Array,
): Promise<void> {
  try {
    await writeAll(conn, bytes);
  } catch {
    // The client is gone.
  } finally {
    try {
      conn.close();
    } catch {
      // Already closed.
    }
  }
}

/** Most bytes dropped after an error answer. */
const LINGER_BYTES = 1024 * 1024;

/**
 * Write an answer the connection ends with, then end our side and drop what
 * the client still sends (up to 1 MiB): closing with unread bytes would
 * reset the connection, and the client could lose the answer. Never throws
 * (a client that is gone is not an error here).
 *
 * @param conn The connection (the caller closes it).
 * @param answer `bytes`: the answer; `lingering`: called once the answer is
 *   out, before the dropping (to set the deadline that ends it).
 */
export async function answerAndClose(
  conn: Deno.TcpConn,
  { bytes, lingering }: { bytes: Uint8Array; lingering: () => void },
): Promise<void> {
  try {
    await writeAll(conn, bytes);
    await conn.closeWrite();
    lingering();
    const sink = new Uint8Array(16 * 1024);
    for (let dropped = 0; dropped < LINGER_BYTES;) {
      const n = await conn.read(sink);
      if (n === null) break;
      dropped += n;
    }
  } catch {
    // The client is gone.
  }
}
