/**
 * {@linkcode ConnBody}: an upstream answer's body as it comes off the
 * connection, framed by its length, by chunks, or by the connection's end
 * (RFC 9112 §6.3), handed out piece by piece as views of the connection's
 * buffer; once read to its end (or given up) the connection goes back to
 * its pool, or is closed.
 *
 * @module
 */
import { type Pieces, readAll } from "../body_pieces.ts";
import { MalformedAnswerError } from "./answer_head.ts";
import { type ConnReader, UpstreamClosedError } from "./conn_reader.ts";

/** How a body ends. */
export type Framing =
  | { kind: "length"; bytes: number }
  | { kind: "chunked" }
  | { kind: "close" };

/** Longest chunk-size line (with extensions) or trailer line. */
const MAX_LINE = 4096;
/** Most trailer lines read (and dropped). */
const MAX_TRAILERS = 64;
/** Largest piece handed out. */
const PIECE_BYTES = 16 * 1024;

const LINE_DECODER = new TextDecoder();

/**
 * A chunk-size line's size: hex digits (13 at most), then optional
 * whitespace and extensions (`;…`), read from the bytes.
 *
 * @param line The line, without its CRLF.
 * @returns The size.
 * @throws {MalformedAnswerError} Not a chunk-size line.
 */
function chunkSize(line: Uint8Array): number {
  let size = 0;
  let i = 0;
  for (; i < line.length; i++) {
    const b = line[i];
    const l = b | 32; // a letter in lower case
    const d = b >= 48 && b <= 57 ? b - 48 : l >= 97 && l <= 102 ? l - 87 : -1;
    if (d < 0 || i === 13) break;
    size = size * 16 + d;
  }
  let rest = i;
  while (rest < line.length && (line[rest] === 32 || line[rest] === 9)) rest++;
  if (i === 0 || (rest < line.length && line[rest] !== 59)) {
    throw new MalformedAnswerError(
      `the chunk size ${
        JSON.stringify(LINE_DECODER.decode(line.subarray(0, 20)))
      }`,
    );
  }
  return size;
}

/** A body read off its connection. */
export class ConnBody implements Pieces {
  readonly #reader: ConnReader;
  readonly #framing: Framing;
  readonly #end: (reusable: boolean) => void;
  /** Bytes left of the body (length) or of the chunk under way (chunked). */
  #left: number;
  /** A chunk's data was read: its CRLF comes before the next size line. */
  #afterChunk = false;
  #done = false;

  /**
   * Create a `ConnBody`.
   *
   * @param reader The connection's reader, past the answer's head.
   * @param framing How the body ends.
   * @param end Called once: with true when the body was read to its end
   *   and the connection may carry another request, else false (the
   *   connection is closed).
   */
  constructor(
    reader: ConnReader,
    framing: Framing,
    end: (reusable: boolean) => void,
  ) {
    this.#reader = reader;
    this.#framing = framing;
    this.#end = end;
    this.#left = framing.kind === "length" ? framing.bytes : 0;
  }

  /** {@inheritDoc Pieces.next} */
  async next(): Promise<Uint8Array | null> {
    if (this.#done) return null;
    try {
      switch (this.#framing.kind) {
        case "length":
          return await this.#fromLength();
        case "chunked":
          return await this.#fromChunks();
        default: {
          const piece = await this.#reader.some(PIECE_BYTES);
          if (piece === null) this.#finish(false);
          return piece;
        }
      }
    } catch (err) {
      this.#finish(false);
      throw err;
    }
  }

  /** {@inheritDoc Pieces.read} */
  async read(): Promise<Uint8Array | null> {
    return (await this.next())?.slice() ?? null;
  }

  /**
   * The whole body (the caller's to keep).
   *
   * @returns Its bytes.
   */
  async bytes(): Promise<Uint8Array> {
    if (this.#framing.kind === "length" && !this.#done) {
      const out = new Uint8Array(this.#left);
      try {
        await this.#reader.exactly(out);
      } catch (err) {
        this.#finish(false);
        throw err;
      }
      this.#left = 0;
      this.#finish(true);
      return out;
    }
    return await readAll(this);
  }

  /** {@inheritDoc Pieces.cancel} */
  cancel(): Promise<void> {
    this.#finish(false);
    return Promise.resolve();
  }

  #finish(reusable: boolean): void {
    if (this.#done) return;
    this.#done = true;
    this.#end(reusable);
  }

  async #fromLength(): Promise<Uint8Array | null> {
    if (this.#left === 0) {
      this.#finish(true);
      return null;
    }
    const piece = await this.#reader.some(Math.min(this.#left, PIECE_BYTES));
    if (piece === null) throw new UpstreamClosedError("an answer's body");
    this.#left -= piece.length;
    return piece;
  }

  async #fromChunks(): Promise<Uint8Array | null> {
    if (this.#left === 0) {
      if (this.#afterChunk) {
        if ((await this.#reader.line(MAX_LINE)).length !== 0) {
          throw new MalformedAnswerError("a chunk longer than its size");
        }
        this.#afterChunk = false;
      }
      const size = chunkSize(await this.#reader.line(MAX_LINE));
      if (size === 0) {
        // Trailers are read and dropped, up to the blank line.
        for (let i = 0; (await this.#reader.line(MAX_LINE)).length > 0; i++) {
          if (i >= MAX_TRAILERS) {
            throw new MalformedAnswerError(
              `more than ${MAX_TRAILERS} trailers`,
            );
          }
        }
        this.#finish(true);
        return null;
      }
      this.#left = size;
      this.#afterChunk = true;
    }
    const piece = await this.#reader.some(Math.min(this.#left, PIECE_BYTES));
    if (piece === null) throw new UpstreamClosedError("a chunked answer");
    this.#left -= piece.length;
    return piece;
  }
}
