/**
 * {@linkcode StreamKeep}: a streamed answer read for its record as it is
 * relayed, a few events at a time (up to 32 KiB of the stream gathered,
 * then read; the rest when the answer is asked for), instead of keeping its
 * bytes: what stays in memory is the answer so far (its text and calls)
 * and at most those few events, not the whole stream's framing, nor the
 * 64 KiB buffers `fetch` hands each piece in. The bytes read count against
 * the answer's limit and the gateway's budget of kept bytes; past either,
 * reading stops (the answer goes on unchanged; its record says the answer
 * was not kept whole).
 *
 * @module
 */
import type { KeptBytes } from "./kept_bytes.ts";
import { SseParser } from "./sse.ts";
import type { StreamAccumulator, WireReader } from "./wire_types.ts";

/**
 * Bytes of a stream gathered before they are read: reading a few events at
 * once costs less than reading each as it comes (a process woken by each
 * piece runs the reader's code cold every time), and a stream's answer is
 * wanted only when it is recorded (or asked for by a request repeating it).
 */
const GATHER_BYTES = 32 * 1024;

/** A stream's answer, read as it passes. */
export class StreamKeep {
  readonly #acc: StreamAccumulator;
  readonly #parser: SseParser;
  readonly #budget: KeptBytes;
  readonly #limit: number;
  /** Bytes taken but not read yet (the first `#gathered` of `#gather`). */
  #gather: Uint8Array = new Uint8Array(0);
  #gathered = 0;
  #ended = false;
  #finished = false;
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
    this.#acc = reader.streamReader();
    const acc = this.#acc;
    this.#parser = new SseParser((e, d) => acc.add(e, d));
    this.#budget = budget;
    this.#limit = limit;
  }

  /** The answer so far (every piece taken is read first). */
  get acc(): StreamAccumulator {
    this.#read();
    return this.#acc;
  }

  /**
   * Take the next piece (as relayed): copied, and read with the pieces
   * that follow.
   *
   * @param bytes The piece (its buffer may be reused once this returns).
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
    const at = this.#gathered;
    if (at + n > this.#gather.length) {
      const grown = new Uint8Array(Math.max(4096, 2 * (at + n)));
      grown.set(this.#gather.subarray(0, at));
      this.#gather = grown;
    }
    this.#gather.set(bytes, at);
    this.#gathered = at + n;
    if (this.#gathered >= GATHER_BYTES) this.#readGathered();
  }

  /** The stream ended (what is gathered is read when the answer is asked for). */
  end(): void {
    this.#ended = true;
  }

  /** Whether the whole answer was read and its final event came. */
  get complete(): boolean {
    return this.stopped === null && this.acc.complete;
  }

  /** Read what is gathered, and the end once the stream ended. */
  #read(): void {
    this.#readGathered();
    if (this.#ended && !this.#finished) {
      this.#finished = true;
      if (this.stopped === null) this.#parser.end();
      this.#gather = new Uint8Array(0);
    }
  }

  #readGathered(): void {
    if (this.#gathered === 0) return;
    const bytes = this.#gather.subarray(0, this.#gathered);
    this.#gathered = 0;
    this.#parser.push(bytes);
  }
}
