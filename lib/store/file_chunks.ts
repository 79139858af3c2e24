/**
 * Chunked file readers shared by the store's scans.
 *
 * @module
 */

/** Size of each read. */
export const CHUNK_BYTES = 1 << 20;

/**
 * Read a file synchronously in chunks, from an offset.
 *
 * @param path File path.
 * @param from Byte offset to start at.
 * @returns Fresh chunks (never reused).
 */
export function* readChunksSync(
  path: string,
  from = 0,
): Generator<Uint8Array> {
  const file = Deno.openSync(path, { read: true });
  try {
    file.seekSync(from, Deno.SeekMode.Start);
    for (;;) {
      const buf = new Uint8Array(CHUNK_BYTES);
      const n = file.readSync(buf);
      if (n === null || n === 0) return;
      yield buf.subarray(0, n);
    }
  } finally {
    file.close();
  }
}

/**
 * Read a file asynchronously in chunks, from an offset.
 *
 * @param path File path.
 * @param from Byte offset to start at.
 * @returns Fresh chunks (never reused).
 */
export async function* readChunks(
  path: string,
  from = 0,
): AsyncGenerator<Uint8Array> {
  using file = await Deno.open(path, { read: true });
  await file.seek(from, Deno.SeekMode.Start);
  for (;;) {
    const buf = new Uint8Array(CHUNK_BYTES);
    const n = await file.read(buf);
    if (n === null || n === 0) return;
    yield buf.subarray(0, n);
  }
}
