/**
 * {@linkcode ConnReader}: buffered reading of an upstream connection's
 * answers: heads and chunk-size lines within limits, and body bytes handed
 * out as views of the one buffer (valid until the next read), so relaying
 * an answer allocates nothing per piece.
 *
 * @module
 */

const CR = 13;
const LF = 10;

/** The upstream ended the connection before the answer did. */
export class UpstreamClosedError extends Error {
  /**
   * Create an `UpstreamClosedError`.
   *
   * @param where What was being read.
   */
  constructor(where: string) {
    super(`The upstream closed the connection in the middle of ${where}`);
    this.name = "UpstreamClosedError";
  }
}

/** A growable read buffer over one connection. */
export class ConnReader {
  readonly #conn: Deno.Conn;
  #buf: Uint8Array;
  #start = 0;
  #end = 0;
  #watching: Promise<boolean> | null = null;

  /**
   * Create a `ConnReader`.
   *
   * @param conn The connection.
   * @param size Initial buffer size in bytes (also the largest piece).
   */
  constructor(conn: Deno.Conn, size = 16 * 1024) {
    this.#conn = conn;
    this.#buf = new Uint8Array(size);
  }

  /**
   * Start a read whose bytes the next `fill` takes: an idle connection
   * keeps one under way, so a peer that closes it is seen at once.
   *
   * @returns Resolves false when the connection ends (or fails), true when
   *   bytes arrived.
   */
  watch(): Promise<boolean> {
    this.#watching ??= this.fill().catch(() => false);
    return this.#watching;
  }

  /**
   * Read more bytes (compacting the buffer, or growing it so that `room`
   * bytes fit).
   *
   * @param room Free bytes wanted.
   * @returns False at the end of the connection.
   */
  async fill(room = 4096): Promise<boolean> {
    if (this.#watching !== null) {
      const w = this.#watching;
      this.#watching = null;
      return await w;
    }
    if (this.#start === this.#end) this.#start = this.#end = 0;
    if (this.#buf.length - this.#end < room) {
      const live = this.#end - this.#start;
      const size = Math.max(this.#buf.length, live + room);
      if (size > this.#buf.length) {
        const next = new Uint8Array(size);
        next.set(this.#buf.subarray(this.#start, this.#end));
        this.#buf = next;
      } else this.#buf.copyWithin(0, this.#start, this.#end);
      this.#start = 0;
      this.#end = live;
    }
    const n = await this.#conn.read(this.#buf.subarray(this.#end));
    if (n === null) return false;
    this.#end += n;
    return true;
  }

  /**
   * Take everything up to a blank line (`CRLF CRLF`), without it.
   *
   * @param limit Most bytes the head may have.
   * @returns The head's bytes (a view valid until the next read).
   * @throws {RangeError} Past `limit`.
   * @throws {UpstreamClosedError} The connection ends first.
   */
  async head(limit: number): Promise<Uint8Array> {
    let from = this.#start;
    for (;;) {
      const buf = this.#buf;
      const stop = Math.min(this.#end, this.#start + limit + 4);
      for (let i = buf.indexOf(CR, from); i >= 0 && i + 3 < stop;) {
        if (buf[i + 1] === LF && buf[i + 2] === CR && buf[i + 3] === LF) {
          const head = buf.subarray(this.#start, i);
          this.#start = i + 4;
          return head;
        }
        i = buf.indexOf(CR, i + 1);
      }
      if (this.#end - this.#start >= limit + 4) {
        throw new RangeError(
          `The upstream's answer head is larger than ${limit} bytes`,
        );
      }
      const offset = Math.max(0, this.#end - this.#start - 3);
      if (!await this.fill()) throw new UpstreamClosedError("an answer head");
      from = this.#start + offset;
    }
  }

  /**
   * Take one line up to `CRLF`, without it.
   *
   * @param limit Most bytes the line may have (without its `CRLF`).
   * @returns The line's bytes (a view valid until the next read).
   * @throws {RangeError} Past `limit`.
   * @throws {UpstreamClosedError} The connection ends first.
   */
  async line(limit: number): Promise<Uint8Array> {
    let from = this.#start;
    for (;;) {
      const buf = this.#buf;
      const stop = Math.min(this.#end, this.#start + limit + 2);
      for (let i = buf.indexOf(CR, from); i >= 0 && i + 1 < stop;) {
        if (buf[i + 1] === LF) {
          const line = buf.subarray(this.#start, i);
          this.#start = i + 2;
          return line;
        }
        i = buf.indexOf(CR, i + 1);
      }
      if (this.#end - this.#start >= limit + 2) {
        throw new RangeError(
          `A line of the upstream's answer is longer than ${limit} bytes`,
        );
      }
      const offset = Math.max(0, this.#end - this.#start - 1);
      if (!await this.fill(limit + 2)) {
        throw new UpstreamClosedError("a chunked answer");
      }
      from = this.#start + offset;
    }
  }

  /**
   * Up to `max` bytes, reading when none is buffered.
   *
   * @param max Most bytes wanted (> 0).
   * @returns A view valid until the next read, or null at the end of the
   *   connection.
   */
  async some(max: number): Promise<Uint8Array | null> {
    if (this.#start === this.#end && !await this.fill()) return null;
    const n = Math.min(max, this.#end - this.#start);
    const out = this.#buf.subarray(this.#start, this.#start + n);
    this.#start += n;
    return out;
  }

  /**
   * Fill `into` exactly, from the buffer first, then reading straight into it.
   *
   * @param into Where the bytes go.
   * @throws {UpstreamClosedError} The connection ends first.
   */
  async exactly(into: Uint8Array): Promise<void> {
    const have = Math.min(this.#end - this.#start, into.length);
    into.set(this.#buf.subarray(this.#start, this.#start + have));
    this.#start += have;
    for (let at = have; at < into.length;) {
      const n = await this.#conn.read(into.subarray(at));
      if (n === null) throw new UpstreamClosedError("an answer's body");
      at += n;
    }
  }
}
