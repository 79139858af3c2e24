/**
 * The byte-level side of the test upstream's HTTP/1.1: a buffered reader of
 * one connection (request heads, `Content-Length` and chunked bodies, the
 * peer's end) and the writes.
 *
 * @module
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** `\r\n`. */
export const CRLF = encoder.encode("\r\n");
const HEAD_END = encoder.encode("\r\n\r\n");

/** Buffered reads from one connection; every read it starts is awaited. */
export class ConnReader {
  readonly #conn: Deno.Conn;
  #buf: Uint8Array<ArrayBuffer> = new Uint8Array(0);
  #pending: Promise<number | null> | null = null;

  constructor(conn: Deno.Conn) {
    this.#conn = conn;
  }

  /** Read more bytes; false at the end of the stream or on an error. */
  async #fill(): Promise<boolean> {
    const chunk = new Uint8Array(16 * 1024);
    this.#pending = this.#conn.read(chunk).catch(() => null);
    const n = await this.#pending;
    this.#pending = null;
    if (n === null) return false;
    this.#buf = concat(this.#buf, chunk.subarray(0, n));
    return true;
  }

  /** The request head without its final blank line, or null at the end. */
  async head(): Promise<string | null> {
    while (true) {
      const at = indexOf(this.#buf, HEAD_END);
      if (at >= 0) {
        const head = decoder.decode(this.#buf.subarray(0, at));
        this.#buf = this.#buf.slice(at + 4);
        return head;
      }
      if (!await this.#fill()) return null;
    }
  }

  /** Exactly `n` bytes. */
  async exact(n: number): Promise<Uint8Array> {
    while (this.#buf.length < n) {
      if (!await this.#fill()) throw new Error("Connection ended in a body");
    }
    const out = this.#buf.slice(0, n);
    this.#buf = this.#buf.slice(n);
    return out;
  }

  async #line(): Promise<string> {
    while (true) {
      const at = indexOf(this.#buf, CRLF);
      if (at >= 0) {
        const line = decoder.decode(this.#buf.subarray(0, at));
        this.#buf = this.#buf.slice(at + 2);
        return line;
      }
      if (!await this.#fill()) throw new Error("Connection ended in a body");
    }
  }

  /** A chunked body, decoded (trailers skipped). */
  async chunked(): Promise<Uint8Array> {
    const parts: Uint8Array[] = [];
    while (true) {
      const size = parseInt((await this.#line()).split(";")[0], 16);
      if (!size) break;
      parts.push(await this.exact(size));
      await this.exact(2);
    }
    while ((await this.#line()) !== "");
    return concat(...parts);
  }

  /** Resolves when the peer closes (or the connection fails). */
  async eof(): Promise<void> {
    while (await this.#fill());
  }

  /** Wait for a read still under way (after the connection is closed). */
  async settle(): Promise<void> {
    await this.#pending;
  }
}

/** Close a connection that may be closed already. */
export function closeQuietly(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch { /* already closed */ }
}

/** Write all bytes. */
export async function writeAll(
  conn: Deno.Conn,
  data: Uint8Array,
): Promise<void> {
  let off = 0;
  while (off < data.length) off += await conn.write(data.subarray(off));
}

/** Bytes joined. */
export function concat(...parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

/** Where `needle` starts in `hay`, or -1. */
export function indexOf(hay: Uint8Array, needle: Uint8Array): number {
  outer: for (let i = 0; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) {
      if (hay[i + j] !== needle[j]) continue outer;
    }
    return i;
  }
  return -1;
}
