/**
 * Gunzip with a bound on what it unpacks. `DecompressionStream` unpacks a
 * whole input chunk at once, so a limit checked on its output comes too
 * late for a bomb (1 MiB of gzip is 1 GiB of zeros): the inflater is fed
 * {@linkcode GUNZIP_SLICE_BYTES} at a time instead, so one slice unpacks to
 * at most ~1,032 times its size (deflate's largest ratio, ~4 MiB), and the
 * first output past the limit stops it. Between slices it can give the
 * event loop a turn (`pause`): inflating is synchronous work.
 *
 * @module
 */
import { PayloadTooLargeError } from "./payload_too_large.ts";

/**
 * Bytes of gzip given to the inflater at a time: at most ~4 MiB comes out
 * of one slice (1 KiB slices cost twice the time of 4 KiB ones on
 * incompressible bodies).
 */
export const GUNZIP_SLICE_BYTES = 4096;

/** Options of {@linkcode gunzipBounded}. */
export interface GunzipBoundedOptions {
  /**
   * Bytes of input per slice.
   * @default GUNZIP_SLICE_BYTES
   */
  sliceBytes?: number;
  /**
   * Called between slices; the work waits for it (a time slicer gives the
   * event loop a turn there). @default none
   */
  pause?: () => Promise<void> | void;
}

/**
 * Unpack a gzip body, refusing one that unpacks past `limit` bytes. Memory
 * stays within `limit` plus one slice's output (~4 MiB), whatever the
 * ratio.
 *
 * @example Unpack a small body
 * ```ts
 * import { gunzipBounded } from "./bounded_gunzip.ts";
 * const gz = new Uint8Array(
 *   await new Response(
 *     new Blob(["hello"]).stream().pipeThrough(new CompressionStream("gzip")),
 *   ).arrayBuffer(),
 * );
 * const text = new TextDecoder().decode(await gunzipBounded(gz, 1024));
 * if (text !== "hello") throw new Error(text);
 * ```
 *
 * @param bytes The gzip body.
 * @param limit Most bytes it may unpack to.
 * @param options Slice size, pause between slices.
 * @returns The unpacked bytes.
 * @throws {PayloadTooLargeError} When it unpacks past `limit`.
 * @throws {SyntaxError} When it is not gzip (or is cut short).
 */
export async function gunzipBounded(
  bytes: Uint8Array,
  limit: number,
  options: GunzipBoundedOptions = {},
): Promise<Uint8Array> {
  const slice = options.sliceBytes ?? GUNZIP_SLICE_BYTES;
  const inflater = new DecompressionStream("gzip");
  const writer = inflater.writable.getWriter();
  const reader = inflater.readable.getReader();
  let stopped = false;
  const feeding = (async () => {
    for (let at = 0; at < bytes.length && !stopped; at += slice) {
      if (at > 0) await options.pause?.();
      if (stopped) return;
      await writer.write(
        bytes.subarray(at, at + slice) as Uint8Array<ArrayBuffer>,
      );
    }
    if (!stopped) await writer.close();
  })();
  // Its failure is the reader's too (the stream errors on both sides).
  feeding.catch(() => {});
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      size += value.length;
      if (size > limit) throw new PayloadTooLargeError(limit);
      chunks.push(value);
    }
    await feeding;
  } catch (err) {
    stopped = true;
    await reader.cancel().catch(() => {});
    if (err instanceof PayloadTooLargeError) throw err;
    throw new SyntaxError(
      `The body is not valid gzip (${(err as Error)?.message ?? err})`,
      { cause: err },
    );
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.length;
  }
  return all;
}
