/**
 * {@linkcode Pieces}, an answer's body piece by piece, and
 * {@linkcode BodyPieces}: a `fetch` body read piece by piece into buffers
 * of the gateway's own (a BYOB read, when the body takes one). `fetch`
 * hands each piece of a default read in a fresh 64 KiB buffer — a 300-byte
 * event of a stream, or each 4 KiB of a decompressed answer — so holding
 * one piece holds 64 KiB, and relaying 256 streams made gigabytes of such
 * buffers, which the allocator kept after they were freed.
 *
 * @module
 */

import { concat } from "./exchange_bytes.ts";

/** The buffer each read fills. */
const PIECE_BYTES = 16 * 1024;

/** An answer's body, read piece by piece. */
export interface Pieces {
  /**
   * The next piece, the caller's to keep.
   *
   * @returns It (never empty), or null at the end.
   */
  read(): Promise<Uint8Array | null>;
  /**
   * The next piece, valid only until the next call (a relay copies each
   * piece out before it asks for the next).
   *
   * @returns It (never empty), or null at the end.
   */
  next(): Promise<Uint8Array | null>;
  /**
   * Stop reading (the upstream request is abandoned).
   *
   * @param reason Why.
   */
  cancel(reason?: unknown): Promise<void>;
}

/** A body stream (`fetch`'s), read piece by piece. */
export class BodyPieces implements Pieces {
  readonly #byob: ReadableStreamBYOBReader | null;
  readonly #plain: ReadableStreamDefaultReader<Uint8Array> | null;
  /** The buffer of the last piece `next` gave (reused by the next). */
  #spare: ArrayBuffer | null = null;

  /**
   * Create a `BodyPieces`.
   *
   * @param body The body.
   */
  constructor(body: ReadableStream<Uint8Array>) {
    let byob: ReadableStreamBYOBReader | null = null;
    try {
      byob = body.getReader({ mode: "byob" });
    } catch {
      // Not a byte stream: read as it comes, each piece copied.
    }
    this.#byob = byob;
    this.#plain = byob ? null : body.getReader();
  }

  /**
   * The next piece.
   *
   * @returns It (never empty), or null at the end.
   */
  async read(): Promise<Uint8Array | null> {
    for (;;) {
      if (this.#byob) {
        const { done, value } = await this.#byob.read(
          new Uint8Array(PIECE_BYTES),
        );
        if (done) return null;
        if (value && value.length > 0) return value;
        continue;
      }
      const { done, value } = await this.#plain!.read();
      if (done) return null;
      if (value.length === 0) continue;
      return value.byteLength < value.buffer.byteLength / 2
        ? value.slice()
        : value;
    }
  }

  /**
   * The next piece, read into a buffer this reader reuses: valid only until
   * the next call (a relay copies each piece out before it asks for the
   * next), so relaying a stream allocates no buffer per piece.
   *
   * @returns It (never empty), or null at the end.
   */
  async next(): Promise<Uint8Array | null> {
    if (!this.#byob) return await this.read();
    for (;;) {
      const spare = this.#spare;
      this.#spare = null;
      const { done, value } = await this.#byob.read(
        spare ? new Uint8Array(spare) : new Uint8Array(PIECE_BYTES),
      );
      if (done) return null;
      if (value) this.#spare = value.buffer as ArrayBuffer;
      if (value && value.length > 0) return value;
    }
  }

  /**
   * Stop reading (the upstream request is aborted).
   *
   * @param reason Why.
   */
  async cancel(reason?: unknown): Promise<void> {
    await (this.#byob ?? this.#plain)!.cancel(reason).catch(() => {});
  }
}

/**
 * A piece fit to be held: copied to its own size when it fills less than
 * half of its buffer.
 *
 * @param piece The piece.
 * @returns It, or its copy.
 */
export function heldPiece(piece: Uint8Array): Uint8Array {
  return piece.byteLength < piece.buffer.byteLength / 2 ? piece.slice() : piece;
}

/**
 * Read a body to its end.
 *
 * @param pieces The body.
 * @returns Its bytes (the one piece itself when there is one).
 */
export async function readAll(pieces: Pieces): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for (let p = await pieces.read(); p !== null; p = await pieces.read()) {
    parts.push(p);
  }
  return parts.length === 1 ? parts[0] : concat(parts);
}
