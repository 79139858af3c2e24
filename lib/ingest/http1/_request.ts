/**
 * Reading a request: its head ({@linkcode readHead}, parsed by `_head.ts`),
 * its body ({@linkcode readRequestBody}: a `Content-Length`, or chunked
 * through `_chunked.ts`, where every chunk is charged {@linkcode CHUNK_COST}
 * bytes against the body limit beside its data, so a body sent a byte per
 * chunk is refused (413) long before it costs memory or CPU out of
 * proportion, CVE-2024-22019), and the {@linkcode BufferedRequest} a handler
 * is given.
 *
 * @module
 */
import type { ByteReader } from "./_reader.ts";
import { type BodyBounds, CHUNK_COST, readChunkedBody } from "./_chunked.ts";
import { HttpProtocolError } from "./_errors.ts";
import { parseHead, type RequestHead } from "./_head.ts";
import type { IngestRequest } from "./_exchange.ts";
import { decodeUtf8 } from "../body.ts";
import { PayloadTooLargeError } from "../payload_too_large.ts";

export { CHUNK_COST, HttpProtocolError };

/**
 * Read and parse the next request head.
 *
 * @param reader The connection's reader.
 * @param limit Most bytes the head may have.
 * @returns The head, or `null` when the stream ends before a byte of it.
 * @throws {HttpProtocolError} 431 past `limit`; see {@linkcode parseHead}.
 * @throws {UnexpectedEndError} The stream ends inside the head.
 */
export async function readHead(
  reader: ByteReader,
  limit: number,
): Promise<RequestHead | null> {
  let bytes: Uint8Array | null;
  try {
    bytes = await reader.head(limit);
  } catch (err) {
    if (err instanceof RangeError) {
      throw new HttpProtocolError(431, err.message);
    }
    throw err;
  }
  return bytes === null ? null : parseHead(bytes);
}

/**
 * Read a request's body (of its declared `Content-Length`).
 *
 * @param reader The connection's reader, just past the head.
 * @param body `head`: the parsed head; `limit`: most body bytes accepted
 *   (chunked: data plus what its chunks are charged); `reserve` (optional):
 *   reserves body bytes in the server's memory budget as a chunked body
 *   grows (throws when it is spent).
 * @returns The body (empty when there is none).
 * @throws {HttpProtocolError} 413 past `limit`.
 * @throws {UnexpectedEndError} The client closed the connection first.
 */
export async function readRequestBody(
  reader: ByteReader,
  { head, limit, reserve = () => {} }:
    & { head: RequestHead }
    & Pick<BodyBounds, "limit">
    & Partial<Pick<BodyBounds, "reserve">>,
): Promise<Uint8Array<ArrayBuffer>> {
  if (head.chunked) return await readChunkedBody(reader, { limit, reserve });
  const length = head.contentLength ?? 0;
  if (length > limit) throw tooLarge(limit);
  const body = new Uint8Array(length);
  if (length > 0) await reader.exactly(body);
  return body;
}

/**
 * The 413 for a body past the limit.
 *
 * @param limit The limit, in bytes.
 * @returns The error to throw.
 */
export function tooLarge(limit: number): HttpProtocolError {
  return new HttpProtocolError(
    413,
    `Request body is larger than the limit of ${limit} bytes`,
  );
}

/** A request read whole from the connection. */
export class BufferedRequest implements IngestRequest {
  readonly method: string;
  readonly target: string;
  readonly #head: RequestHead;
  readonly #body: Uint8Array;
  #headers: Map<string, string> | null = null;
  /** Set by the listener for long-running routes. */
  signal?: AbortSignal;

  /**
   * Create a `BufferedRequest`.
   *
   * @param head The parsed head.
   * @param body The whole body.
   */
  constructor(head: RequestHead, body: Uint8Array) {
    this.method = head.method;
    this.target = head.target;
    this.#head = head;
    this.#body = body;
  }

  headers(): Iterable<[string, string]> {
    return this.#head.headers;
  }

  header(name: string): string | null {
    if (this.#headers === null) {
      const map = new Map<string, string>();
      for (const [k, v] of this.#head.headers) {
        const had = map.get(k);
        map.set(k, had === undefined ? v : `${had}, ${v}`);
      }
      this.#headers = map;
    }
    return this.#headers.get(name) ?? null;
  }

  text(limit: number): Promise<string> {
    if (this.#body.length > limit) {
      return Promise.reject(new PayloadTooLargeError(limit));
    }
    try {
      return Promise.resolve(decodeUtf8(this.#body));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /**
   * The body as bytes (OTLP protobuf, gzip).
   *
   * @param limit Most bytes accepted.
   * @returns The bytes as read.
   * @throws {PayloadTooLargeError} Past `limit`.
   */
  bytes(limit: number): Promise<Uint8Array> {
    return this.#body.length > limit
      ? Promise.reject(new PayloadTooLargeError(limit))
      : Promise.resolve(this.#body);
  }

  discard(): Promise<void> {
    return Promise.resolve();
  }
}
