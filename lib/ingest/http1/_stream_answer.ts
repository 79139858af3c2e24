/**
 * Writing a streamed answer on one connection: its head, then each piece as
 * a chunk as it comes, the connection's deadline following each write.
 *
 * @module
 */
import { writeAll } from "./_response.ts";
import type { Connection } from "./_pool.ts";
import type { AnswerPieces } from "./_exchange.ts";

/** What {@linkcode writeStreamedAnswer} writes, and how it times writes. */
export interface StreamedAnswer {
  /** The answer's encoded head. */
  headBytes: Uint8Array;
  /** The body's pieces. */
  pieces: AnswerPieces;
  /** Give the connection a write deadline (before each write). */
  enterWrite: () => void;
}

/**
 * Write a streamed answer: its head, then each piece as a chunk as it
 * comes. While the stream is silent the connection has no deadline (the
 * handler bounds its upstream); each write must be taken up within the
 * deadline `enterWrite` sets.
 *
 * @param c The connection.
 * @param answer The head, the pieces and the write deadline.
 * @returns False when the stream failed or the client went away (the
 *   connection is then closed with the body unfinished, so the client
 *   sees a cut answer, never a complete wrong one).
 */
export async function writeStreamedAnswer(
  c: Connection,
  answer: StreamedAnswer,
): Promise<boolean> {
  const { enterWrite, pieces } = answer;
  // The head goes out with the first piece (one write, not two).
  const frames = new ChunkFrames(answer.headBytes);
  try {
    for (;;) {
      c.state = "busy";
      c.deadline = Infinity;
      const value = await pieces.read();
      if (value === null) break;
      if (value.length === 0) continue;
      enterWrite();
      // The frame is a copy: the piece's buffer may be reused by the next
      // read.
      await writeAll(c.conn, frames.frame(value));
    }
    enterWrite();
    await writeAll(c.conn, frames.last());
    return true;
  } catch (err) {
    await pieces.cancel(err).catch(() => {});
    return false;
  }
}

/**
 * A `ReadableStream` read as {@linkcode AnswerPieces}.
 *
 * @param stream The stream.
 * @returns Its pieces.
 */
export function streamPieces(stream: ReadableStream<Uint8Array>): AnswerPieces {
  let reader: ReadableStreamDefaultReader<Uint8Array> | null = null;
  return {
    read: async () => {
      reader ??= stream.getReader();
      const { done, value } = await reader.read();
      return done ? null : value;
    },
    cancel: async (reason) => {
      await (reader ?? stream).cancel(reason);
    },
  };
}

/** Largest frame whose buffer is kept for the next piece. */
const KEPT_FRAME_BYTES = 64 * 1024;

const LAST_CHUNK = new Uint8Array([48, 13, 10, 13, 10]); // "0\r\n\r\n"

/**
 * A streamed answer's chunk frames (RFC 9112 §7.1: the size in hex, CRLF,
 * the data, CRLF), the head before the first, each written into one buffer
 * kept for the stream: each frame is written whole before the next is made,
 * so a piece costs a copy, not a buffer (and no string for its size line).
 */
export class ChunkFrames {
  #head: Uint8Array | null;
  #buf = new Uint8Array(0);

  /**
   * Create a `ChunkFrames`.
   *
   * @param head The answer's head, sent before the first frame.
   */
  constructor(head: Uint8Array) {
    this.#head = head;
  }

  /**
   * The next frame (after the head, the first time). Valid until the next
   * call.
   *
   * @param piece The piece (not empty).
   * @returns The bytes to write.
   */
  frame(piece: Uint8Array): Uint8Array {
    const head = this.#head;
    const lead = head === null ? 0 : head.length;
    const need = lead + 16 + piece.length + 2;
    let buf = this.#buf;
    if (buf.length < need) {
      buf = new Uint8Array(Math.max(need, 1024));
      if (need <= KEPT_FRAME_BYTES) this.#buf = buf;
    }
    let at = 0;
    if (head !== null) {
      buf.set(head);
      at = lead;
      this.#head = null;
    }
    at = writeHexLine(buf, at, piece.length);
    buf.set(piece, at);
    at += piece.length;
    buf[at++] = 13;
    buf[at++] = 10;
    return buf.subarray(0, at);
  }

  /**
   * The last chunk (after the head, when no piece came).
   *
   * @returns The bytes to write.
   */
  last(): Uint8Array {
    const head = this.#head;
    if (head === null) return LAST_CHUNK;
    this.#head = null;
    const out = new Uint8Array(head.length + LAST_CHUNK.length);
    out.set(head);
    out.set(LAST_CHUNK, head.length);
    return out;
  }
}

/** Write `n` in lower-case hex and CRLF at `at`; returns where it ends. */
function writeHexLine(buf: Uint8Array, at: number, n: number): number {
  let digits = 1;
  while (digits < 13 && n >= 16 ** digits) digits++;
  for (let i = digits - 1; i >= 0; i--) {
    const d = n % 16;
    buf[at + i] = d < 10 ? 48 + d : 87 + d;
    n = Math.floor(n / 16);
  }
  at += digits;
  buf[at++] = 13;
  buf[at++] = 10;
  return at;
}
