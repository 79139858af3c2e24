/**
 * The lines of a JSONL spool: one canonical event per line, `\n`-terminated.
 * Split as a stream (bytes in, lines out, with each line's byte offset), so a
 * spool of any size is read in constant memory.
 *
 * @module
 */
/** One line of a spool, without its `\n`. */
export interface SpoolLine {
  /** The line's bytes. */
  bytes: Uint8Array;
  /** Byte offset of the line's first byte in the spool. */
  offset: number;
  /** 1-based line number. */
  lineNumber: number;
  /** False for a last line with no `\n` (a torn tail). */
  terminated: boolean;
}

/**
 * Incremental line splitter: feed chunks, get complete lines.
 */
export class LineSplitter {
  #carry: Uint8Array = new Uint8Array(0);
  #offset: number; // offset of carry[0]
  #lineNumber: number;

  /**
   * @param startOffset Byte offset of the first chunk in the file.
   * @param startLine Lines before the first chunk.
   */
  constructor(startOffset = 0, startLine = 0) {
    this.#offset = startOffset;
    this.#lineNumber = startLine;
  }

  /**
   * Feed one chunk.
   *
   * @param chunk Next bytes.
   * @returns The lines it completed (their bytes may alias the chunk).
   */
  push(chunk: Uint8Array): SpoolLine[] {
    let buf: Uint8Array;
    if (this.#carry.length === 0) buf = chunk;
    else {
      buf = new Uint8Array(this.#carry.length + chunk.length);
      buf.set(this.#carry, 0);
      buf.set(chunk, this.#carry.length);
    }
    const lines: SpoolLine[] = [];
    let start = 0;
    for (;;) {
      const nl = buf.indexOf(10, start);
      if (nl < 0) break;
      lines.push({
        bytes: buf.subarray(start, nl),
        offset: this.#offset + start,
        lineNumber: ++this.#lineNumber,
        terminated: true,
      });
      start = nl + 1;
    }
    this.#offset += start;
    this.#carry = buf.slice(start);
    return lines;
  }

  /**
   * End of input.
   *
   * @returns The unterminated last line, if any.
   */
  end(): SpoolLine | null {
    if (this.#carry.length === 0) return null;
    return {
      bytes: this.#carry,
      offset: this.#offset,
      lineNumber: this.#lineNumber + 1,
      terminated: false,
    };
  }
}

/**
 * Split a byte stream into lines, streaming.
 *
 * @param chunks The spool's bytes, in any chunking.
 * @param options `startOffset`: byte offset of the first chunk in the file.
 * @returns The lines in order.
 */
export async function* splitLines(
  chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  options: { startOffset?: number; startLine?: number } = {},
): AsyncGenerator<SpoolLine> {
  const splitter = new LineSplitter(options.startOffset, options.startLine);
  for await (const chunk of chunks) yield* splitter.push(chunk);
  const last = splitter.end();
  if (last) yield last;
}

/**
 * Split bytes into lines synchronously.
 *
 * @param chunks The spool's bytes, in any chunking.
 * @param options `startOffset`: byte offset of the first chunk in the file.
 * @returns The lines in order.
 */
export function* splitLinesSync(
  chunks: Iterable<Uint8Array>,
  options: { startOffset?: number; startLine?: number } = {},
): Generator<SpoolLine> {
  const splitter = new LineSplitter(options.startOffset, options.startLine);
  for (const chunk of chunks) yield* splitter.push(chunk);
  const last = splitter.end();
  if (last) yield last;
}
