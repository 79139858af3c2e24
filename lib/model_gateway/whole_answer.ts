/**
 * {@linkcode readWholeAnswer}: an upstream's whole (not streamed) answer read
 * while it fits the gateway's limits, so it can be kept for its record; past
 * them, what was read and the rest of the body, relayed as it comes.
 *
 * @module
 */
import { heldPiece, type Pieces } from "./body_pieces.ts";
import type { KeptBytes } from "./kept_bytes.ts";
import type { UpstreamResponse } from "./upstream_response.ts";

/** A whole answer as read: its pieces, or those read before it grew too large and the rest. */
export interface WholeAnswer {
  /** Pieces read (all of them when `rest` is null). */
  chunks: Uint8Array[];
  /** Bytes taken from the budget of kept bytes (0 when `rest` is set). */
  taken: number;
  /** The rest, when the answer is larger than the gateway holds, and why. */
  rest: { stream: Pieces; reason: string } | null;
}

/**
 * Read a whole answer while it fits: at most `maxAnswerBytes` (as
 * decompressed), each piece taken from the budget of kept bytes. Past
 * either, the pieces read so far and the rest of the body as a stream.
 *
 * @param res The upstream's answer.
 * @param limits The budget of kept bytes, and the most bytes of one answer.
 * @returns The pieces, the bytes taken from the budget, and the rest if any.
 */
export async function readWholeAnswer(
  res: UpstreamResponse,
  { kept, maxAnswerBytes }: { kept: KeptBytes; maxAnswerBytes: number },
): Promise<WholeAnswer> {
  const chunks: Uint8Array[] = [];
  let taken = 0;
  // Its size known and not encoded: read at once (the common case).
  const length = Number(res.headers.get("content-length") ?? NaN);
  if (
    Number.isSafeInteger(length) && length <= maxAnswerBytes &&
    !res.headers.has("content-encoding") && kept.take(length)
  ) {
    try {
      return { chunks: [await res.bytes()], taken: length, rest: null };
    } catch (err) {
      kept.give(length);
      throw err;
    }
  }
  const reader = res.body;
  if (!reader) return { chunks, taken, rest: null };
  for (;;) {
    let value: Uint8Array | null;
    try {
      value = await reader.read();
    } catch (err) {
      kept.give(taken);
      throw err;
    }
    if (value === null) return { chunks, taken, rest: null };
    const piece = heldPiece(value);
    const over = taken + piece.length > maxAnswerBytes;
    if (over || !kept.take(piece.length)) {
      kept.give(taken);
      chunks.push(piece);
      return {
        chunks,
        taken: 0,
        rest: {
          stream: reader,
          reason: over
            ? `the answer is larger than the gateway keeps (${maxAnswerBytes} bytes): relayed as it came, not kept for its record`
            : `the gateway's budget of bytes kept for recording (${kept.max} bytes) was used up: the answer was relayed as it came, not kept for its record`,
        },
      };
    }
    taken += piece.length;
    chunks.push(piece);
  }
}
