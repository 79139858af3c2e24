/**
 * Reading request bodies with a size limit.
 *
 * @module
 */
import { PayloadTooLargeError } from "./payload_too_large.ts";

/** Default body limit: 8 MiB (a tool result holding a large file still fits). */
export const DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024;

/**
 * Read a request body as text, refusing more than `limit` bytes.
 *
 * @param req The request.
 * @param limit Byte limit.
 * @returns The text.
 * @throws {PayloadTooLargeError} Past the limit.
 */
export async function readBody(req: Request, limit: number): Promise<string> {
  const declared = Number(req.headers.get("content-length") ?? NaN);
  if (declared > limit) {
    await req.body?.cancel();
    throw new PayloadTooLargeError(limit);
  }
  if (!req.body) return "";
  // A declared length within the limit: the native reader is fastest (the
  // server never delivers more bytes than declared).
  if (Number.isFinite(declared)) {
    return decodeUtf8(new Uint8Array(await req.arrayBuffer()));
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = req.body.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > limit) {
      await reader.cancel();
      throw new PayloadTooLargeError(limit);
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return decodeUtf8(chunks[0]);
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.length;
  }
  return decodeUtf8(all);
}

/** One strict decoder (it keeps no state between whole-buffer decodes). */
const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Decode UTF-8, refusing bytes that are not (a 400, not silent U+FFFD).
 *
 * @param bytes The body.
 * @returns The text.
 * @throws {SyntaxError} When the bytes are not UTF-8.
 */
export function decodeUtf8(bytes: Uint8Array): string {
  try {
    return STRICT_UTF8.decode(bytes);
  } catch {
    throw new SyntaxError(
      "The body is not valid UTF-8: send JSON text encoded as UTF-8",
    );
  }
}
