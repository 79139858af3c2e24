/**
 * A streamed answer's chunk frames are written into one buffer kept for
 * the stream: each frame must still be exactly the size in hex, CRLF, the
 * data and CRLF (the head before the first), whatever the sizes before it.
 *
 * @module
 */
import { assertEquals } from "../_assert.ts";
import { ChunkFrames } from "../../lib/ingest/http1/_stream_answer.ts";

const text = new TextDecoder();

/** The frame by the definition, written plainly. */
function reference(piece: Uint8Array): string {
  return `${piece.length.toString(16)}\r\n${text.decode(piece)}\r\n`;
}

Deno.test("ChunkFrames: each frame is its size in hex, CRLF, the piece, CRLF; the head comes before the first; sizes at every hex boundary, growing and shrinking", () => {
  const head = new TextEncoder().encode("HTTP/1.1 200 OK\r\n\r\n");
  const frames = new ChunkFrames(head);
  const sizes = [1, 15, 16, 255, 256, 4095, 4096, 70_000, 3, 65_535, 65_536, 9];
  sizes.forEach((n, i) => {
    const piece = new Uint8Array(n).fill(97 + (i % 26));
    const got = text.decode(frames.frame(piece));
    const want = (i === 0 ? text.decode(head) : "") + reference(piece);
    assertEquals(got, want, `piece ${i} of ${n} bytes`);
  });
  assertEquals(text.decode(frames.last()), "0\r\n\r\n");
});

Deno.test("ChunkFrames: an answer with no piece is its head and the last chunk", () => {
  const head = new TextEncoder().encode("HTTP/1.1 200 OK\r\n\r\n");
  assertEquals(
    text.decode(new ChunkFrames(head).last()),
    "HTTP/1.1 200 OK\r\n\r\n0\r\n\r\n",
  );
});
