/**
 * Writing a streamed answer on one connection: its head, then each piece as
 * a chunk as it comes, the connection's deadline following each write.
 *
 * @module
 */
import { chunkFrame, writeAll } from "./_response.ts";
import type { Connection } from "./_pool.ts";

/** What {@linkcode writeStreamedAnswer} writes, and how it times writes. */
export interface StreamedAnswer {
  /** The answer's encoded head. */
  headBytes: Uint8Array;
  /** The body's pieces. */
  stream: ReadableStream<Uint8Array>;
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
 * @param answer The head, the stream and the write deadline.
 * @returns False when the stream failed or the client went away (the
 *   connection is then closed with the body unfinished, so the client
 *   sees a cut answer, never a complete wrong one).
 */
export async function writeStreamedAnswer(
  c: Connection,
  answer: StreamedAnswer,
): Promise<boolean> {
  const { enterWrite } = answer;
  const pieces = answer.stream.getReader();
  // The head goes out with the first piece (one write, not two).
  let head: Uint8Array | null = answer.headBytes;
  const out = (bytes: Uint8Array) => {
    if (head === null) return bytes;
    const both = new Uint8Array(head.length + bytes.length);
    both.set(head);
    both.set(bytes, head.length);
    head = null;
    return both;
  };
  try {
    for (;;) {
      c.state = "busy";
      c.deadline = Infinity;
      const { done, value } = await pieces.read();
      if (done) break;
      if (value.length === 0) continue;
      enterWrite();
      await writeAll(c.conn, out(chunkFrame(value)));
    }
    enterWrite();
    await writeAll(c.conn, out(chunkFrame(new Uint8Array(0))));
    return true;
  } catch (err) {
    await pieces.cancel(err).catch(() => {});
    return false;
  }
}
