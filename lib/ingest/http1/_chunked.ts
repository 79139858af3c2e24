/**
 * Chunked request bodies (RFC 9112 §7.1), read so that what a body costs
 * the listener stays in proportion to its data: the data goes into one
 * growing buffer (no buffer per chunk); each chunk is charged
 * {@linkcode CHUNK_COST} bytes against the body limit beside its data, and
 * its size line's extensions count byte for byte (at most
 * {@linkcode MAX_EXTENSION_BYTES} per body), so a 1 MB body sent a byte per
 * chunk is refused (413) after a few thousand chunks. Size lines are at
 * most {@linkcode MAX_CHUNK_LINE} bytes whether or not their end is already
 * buffered; an extension needs a name (`2;` is refused, as llhttp does);
 * trailers are read and dropped (at most {@linkcode MAX_TRAILER_BYTES}).
 *
 * @module
 */
import { type ByteReader, headText } from "./_reader.ts";
import { HttpProtocolError } from "./_errors.ts";

/** How much a request body may take, and how it is charged as it grows. */
export interface BodyBounds {
  /** Most bytes the body may be charged. */
  limit: number;
  /** Reserves bytes in the server's memory budget (throws when it is spent). */
  reserve: (bytes: number) => void;
}

/** What each chunk costs against the body limit, beside its data. */
export const CHUNK_COST = 1024;
/** Longest chunk-size line (with its extensions). */
export const MAX_CHUNK_LINE = 4096;
/** Most extension bytes over one body. */
export const MAX_EXTENSION_BYTES = 16 * 1024;
/** Most trailer bytes. */
export const MAX_TRAILER_BYTES = 16 * 1024;

const SIZE_LINE = /^([0-9A-Fa-f]{1,15})((?:[ \t]*;.*)?)$/;
const TOKEN = "[!#$%&'*+\\-.^_`|~0-9A-Za-z]+";
const EXTENSION = new RegExp(
  `^[ \\t]*${TOKEN}[ \\t]*(?:=[ \\t]*(?:${TOKEN}|"(?:[^"\\\\]|\\\\.)*")[ \\t]*)?$`,
);

function bad(message: string): HttpProtocolError {
  return new HttpProtocolError(400, message);
}

async function lineBytes(
  reader: ByteReader,
  limit: number,
): Promise<Uint8Array> {
  try {
    return await reader.line(limit);
  } catch (err) {
    if (err instanceof RangeError) {
      throw bad(`A chunk line is longer than ${limit} bytes`);
    }
    throw err;
  }
}

async function line(reader: ByteReader, limit: number): Promise<string> {
  return headText(await lineBytes(reader, limit));
}

/** A bare size line's value, read from its bytes (no string made); -1 when it holds more. */
function bareSize(bytes: Uint8Array): number {
  if (bytes.length === 0 || bytes.length > 15) return -1;
  let n = 0;
  for (const b of bytes) {
    const d = b >= 48 && b <= 57
      ? b - 48
      : b >= 65 && b <= 70
      ? b - 55
      : b >= 97 && b <= 102
      ? b - 87
      : -1;
    if (d < 0) return -1;
    n = n * 16 + d;
  }
  return n;
}

/**
 * Read a chunked body.
 *
 * @param reader The connection's reader, just past the head.
 * @param bounds `limit`: most bytes the body may be charged (data, chunk
 *   costs, extensions); `reserve`: reserves data bytes in the server's memory
 *   budget as the body grows.
 * @returns The body's data.
 * @throws {HttpProtocolError} 400 for a malformed chunk, 413 past `limit`.
 */
export async function readChunkedBody(
  reader: ByteReader,
  { limit, reserve }: BodyBounds,
): Promise<Uint8Array<ArrayBuffer>> {
  let buf = new Uint8Array(Math.min(limit, 64 * 1024));
  let size = 0;
  let charged = 0;
  let extensions = 0;
  const charge = (n: number) => {
    charged += n;
    if (charged > limit) {
      throw new HttpProtocolError(
        413,
        `Request body is larger than the limit of ${limit} bytes (a chunked body is charged ${CHUNK_COST} bytes per chunk beside its data: send fewer, larger chunks)`,
      );
    }
  };
  for (;;) {
    const bytes = await lineBytes(reader, MAX_CHUNK_LINE);
    let n = bareSize(bytes);
    const text = n < 0 ? headText(bytes) : "";
    const m = n < 0 ? SIZE_LINE.exec(text) : null;
    if (n < 0 && !m) {
      throw bad(`Not a chunk size line: ${JSON.stringify(text.slice(0, 40))}`);
    }
    if (m?.[2]) {
      for (const ext of m[2].replace(/^[ \t]*;/, "").split(";")) {
        if (!EXTENSION.test(ext)) {
          throw bad(`A chunk extension needs a name: ${JSON.stringify(ext)}`);
        }
      }
      extensions += m[2].length;
      if (extensions > MAX_EXTENSION_BYTES) {
        throw bad(
          `Chunk extensions pass ${MAX_EXTENSION_BYTES} bytes in one body`,
        );
      }
      charge(m[2].length);
    }
    if (m) n = parseInt(m[1], 16);
    charge(CHUNK_COST);
    if (n === 0) break;
    charge(n);
    reserve(n);
    if (size + n > buf.length) {
      const next = new Uint8Array(
        Math.min(limit, Math.max(buf.length * 2, size + n)),
      );
      next.set(buf.subarray(0, size));
      buf = next;
    }
    await reader.exactly(buf.subarray(size, size + n));
    size += n;
    if ((await lineBytes(reader, 0)).length !== 0) {
      throw bad("A chunk's data runs past its size");
    }
  }
  let trailer = 0;
  for (;;) {
    const t = await line(reader, MAX_CHUNK_LINE);
    if (t === "") break;
    trailer += t.length + 2;
    if (trailer > MAX_TRAILER_BYTES) {
      throw bad(`Trailer fields pass ${MAX_TRAILER_BYTES} bytes`);
    }
  }
  return buf.slice(0, size);
}
