/**
 * {@linkcode StreamKeep}: a streamed answer read for its record as it is
 * relayed, event by event, instead of keeping its bytes: what stays in
 * memory is the answer so far (its text and calls), not the stream's
 * framing, nor the 64 KiB buffers `fetch` hands each piece in. The bytes
 * read count against the answer's limit and the gateway's budget of kept
 * bytes; past either, reading stops (the answer goes on unchanged; its
 * record says the answer was not kept whole).
 *
 * @module
 */
import type { KeptBytes } from "./kept_bytes.ts";
import { SseParser } from "./sse.ts";
import type { StreamAccumulator, WireReader } from "./wire_types.ts";

/** A stream's answer, read as it passes. */
export class StreamKeep {
  /** The answer so far. */
  readonly acc: StreamAccumulator;
  readonly #parser: SseParser;
  readonly #budget: KeptBytes;
  readonly #limit: number;
  /** Bytes read (taken from the budget). */
  taken = 0;
  /** Why reading stopped before the end, or null. */
  stopped: string | null = null;

  /**
   * Create a `StreamKeep`.
   *
   * @param reader The wire's reader.
   * @param budget The gateway's budget of kept bytes.
   * @param limit The most bytes read of one answer.
   */
  constructor(reader: WireReader, budget: KeptBytes, limit: number) {
    this.acc = reader.streamReader();
    const acc = this.acc;
    this.#parser = new SseParser((e, d) => acc.add(e, d));
    this.#budget = budget;
    this.#limit = limit;
  }

  /**
   * Read the next piece (as relayed).
   *
   * @param bytes The piece.
   */
  push(bytes: Uint8Array): void {
    if (this.stopped !== null) return;
    const n = bytes.length;
    if (this.taken + n > this.#limit) {
      this.stopped =
        `the streamed answer is larger than the gateway keeps for its record (${this.#limit} bytes)`;
      return;
    }
    if (!this.#budget.take(n)) {
      this.stopped =
        `the gateway's budget of bytes kept for recording (${this.#budget.max} bytes) was used up`;
      return;
    }
    this.taken += n;
    this.#parser.push(bytes);
  }

  /** The stream ended. */
  end(): void {
    if (this.stopped === null) this.#parser.end();
  }

  /** Whether the whole answer was read and its final event came. */
  get complete(): boolean {
    return this.stopped === null && this.acc.complete;
  }
}
