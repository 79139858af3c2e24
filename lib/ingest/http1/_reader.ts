/**
 * {@linkcode ByteReader}: buffered reading of one HTTP/1.1 connection's bytes
 * (request heads within a limit, bodies of a known length).
 *
 * @module
 */

/** Reads bytes into the buffer given; `null` at the end of the stream. */
export type ReadFn = (into: Uint8Array) => Promise<number | null>;

/** The peer closed the connection in the middle of a request. */
export class UnexpectedEndError extends Error {
  /** Create an `UnexpectedEndError`. */
  constructor() {
    super("The client closed the connection in the middle of a request");
    this.name = "UnexpectedEndError";
  }
}

const CR = 13;
const LF = 10;

/** A growable read buffer over a {@linkcode ReadFn}. */
export class ByteReader {
  readonly #read: ReadFn;
  #buf: Uint8Array;
  #start = 0;
  #end = 0;

  /**
   * Create a `ByteReader`.
   *
   * @param read Where bytes come from.
   * @param size Initial buffer size in bytes.
   */
  constructor(read: ReadFn, size = 16 * 1024) {
    this.#read = read;
    this.#buf = new Uint8Array(size);
  }

  #watching: Promise<boolean> | null = null;

  /**
   * Start a read that keeps what arrives for the next `fill` (or `head`),
   * and tell when the peer ends the stream: while an answer is streamed,
   * that is how a client that went away is noticed.
   *
   * @returns Resolves false when the stream ends (or fails), true when
   *   bytes arrived.
   */
  watch(): Promise<boolean> {
    // `fill` starts its read before the promise is kept here.
    this.#watching ??= this.fill().catch(() => false);
    return this.#watching;
  }

  /** Bytes buffered and not yet taken. */
  get buffered(): number {
    return this.#end - this.#start;
  }

  /**
   * Read more bytes from the source (compacting or growing the buffer so
   * that at least `room` bytes fit).
   *
   * @param room Free bytes wanted.
   * @returns False at the end of the stream.
   */
  async fill(room = 4096): Promise<boolean> {
    if (this.#watching !== null) {
      // A read started by `watch` is under way: its bytes are this fill's.
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
    const n = await this.#read(this.#buf.subarray(this.#end));
    if (n === null) return false;
    this.#end += n;
    return true;
  }

  /**
   * Take everything up to a blank line (`CRLF CRLF`), without it.
   *
   * @param limit Most bytes the head may have.
   * @returns The head's bytes (a view valid until the next read), or
   *   `null` when the stream ends before any byte of it.
   * @throws {RangeError} Past `limit`.
   * @throws {UnexpectedEndError} The stream ends inside the head.
   */
  async head(limit: number): Promise<Uint8Array | null> {
    let from = this.#start;
    for (;;) {
      const at = this.#find(from, limit);
      if (at >= 0) {
        const head = this.#buf.subarray(this.#start, at);
        this.#start = at + 4;
        return head;
      }
      if (this.#end - this.#start >= limit + 4) {
        throw new RangeError(`The request head is larger than ${limit} bytes`);
      }
      from = Math.max(this.#start, this.#end - 3);
      const offset = from - this.#start;
      if (!await this.fill()) {
        if (this.#end === this.#start) return null;
        throw new UnexpectedEndError();
      }
      from = this.#start + offset;
    }
  }

  /**
   * Take one line up to `CRLF`, without it. The limit holds whether or not
   * the line's end is already buffered.
   *
   * @param limit Most bytes the line may have (without its `CRLF`).
   * @returns The line's bytes (a view valid until the next read).
   * @throws {RangeError} Past `limit`.
   * @throws {UnexpectedEndError} The stream ends first.
   */
  async line(limit: number): Promise<Uint8Array> {
    let from = this.#start;
    for (;;) {
      const stop = Math.min(this.#end, this.#start + limit + 2);
      for (let i = this.#buf.indexOf(CR, from); i >= 0 && i + 1 < stop;) {
        if (this.#buf[i + 1] === LF) {
          const line = this.#buf.subarray(this.#start, i);
          this.#start = i + 2;
          return line;
        }
        i = this.#buf.indexOf(CR, i + 1);
      }
      if (this.#end - this.#start >= limit + 2) {
        throw new RangeError(`A line is longer than ${limit} bytes`);
      }
      const offset = Math.max(0, this.#end - this.#start - 1);
      if (!await this.fill(limit + 2)) throw new UnexpectedEndError();
      from = this.#start + offset;
    }
  }

  /** Index of `CRLF CRLF` between `from` and the end, or -1. */
  #find(from: number, limit: number): number {
    const buf = this.#buf;
    const stop = Math.min(this.#end, this.#start + limit + 4);
    for (let i = buf.indexOf(CR, from); i >= 0 && i + 3 < stop;) {
      if (buf[i + 1] === LF && buf[i + 2] === CR && buf[i + 3] === LF) {
        return i;
      }
      i = buf.indexOf(CR, i + 1);
    }
    return -1;
  }

  /**
   * Copy exactly `into.length` bytes into `into`, reading straight into it
   * once the buffer is used up.
   *
   * @param into Where the bytes go.
   * @throws {UnexpectedEndError} The stream ends first.
   */
  async exactly(into: Uint8Array): Promise<void> {
    const have = Math.min(this.#end - this.#start, into.length);
    into.set(this.#buf.subarray(this.#start, this.#start + have));
    this.#start += have;
    let at = have;
    while (at < into.length) {
      const n = await this.#read(into.subarray(at));
      if (n === null) throw new UnexpectedEndError();
      at += n;
    }
  }
}

/** One decoder for heads (no state is kept between whole-buffer decodes). */
const HEAD_DECODER = new TextDecoder();

/**
 * A head's bytes as text. HTTP heads are ASCII in practice;
 * other bytes are read as UTF-8 (invalid ones as U+FFFD), which no header
 * the server acts on can match. A native decode: 20× a per-byte copy.
 *
 * @param bytes The bytes.
 * @returns The text.
 */
export function headText(bytes: Uint8Array): string {
  return HEAD_DECODER.decode(bytes);
}
