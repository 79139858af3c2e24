/**
 * HTTP/1.1 request heads and bodies, read strictly (RFC 9112): what the
 * ingest server's own listener (`Http1Server`) accepts.
 *
 * - Request line `METHOD SP target SP HTTP/1.x`; origin-form or
 *   absolute-form targets.
 * - Header names are tokens; values hold no control bytes; no line folding.
 * - A body has a `Content-Length`, or `Transfer-Encoding: chunked` alone
 *   (OpenTelemetry's OTLP/HTTP exporters stream their bodies). Chunked
 *   bodies are read into one growing buffer; every chunk is charged
 *   {@linkcode CHUNK_COST} bytes against the body limit beside its data, and
 *   its size line and extensions count too, so a body sent a byte per chunk
 *   is refused (413) long before it costs memory or CPU out of proportion
 *   (CVE-2024-22019). Any other coding, an empty one, chunked beside a
 *   `Content-Length` (smuggling) or in HTTP/1.0 is refused before the body.
 * - `Expect: 100-continue` is answered; other expectations get 417.
 *
 * @module
 */
import { type ByteReader, headText } from "./http1_reader.ts";
import { CHUNK_COST, readChunkedBody } from "./http1_chunked.ts";
import { HttpProtocolError } from "./http1_errors.ts";

export { HttpProtocolError };

export { CHUNK_COST };
import type { IngestRequest } from "./exchange.ts";
import { decodeUtf8 } from "./body.ts";
import { PayloadTooLargeError } from "./errors.ts";

/** A parsed request head. */
export interface RequestHead {
  /** Method, as sent (case-sensitive). */
  method: string;
  /** Path and query (`/ingest?x=1`), absolute-form targets reduced to it. */
  target: string;
  /** Header name (lower case) and value pairs, in order. */
  headers: [string, string][];
  /** Declared body length; `null` when there is no body. */
  contentLength: number | null;
  /** Whether the connection may serve another request after this one. */
  keepAlive: boolean;
  /** Whether the client waits for `100 Continue` before the body. */
  expectContinue: boolean;
  /** HTTP/1.0 rather than 1.1. */
  http10: boolean;
  /** The body comes as `Transfer-Encoding: chunked`. */
  chunked: boolean;
}

/** Most header lines a request may have. */
export const MAX_HEADER_COUNT = 100;

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// deno-lint-ignore no-control-regex
const BAD_VALUE = /[\x00-\x08\x0a-\x1f\x7f]/;
const TARGET = /^[\x21-\x7e]+$/;

/**
 * Parse a request head (the bytes before the blank line).
 *
 * @param bytes The head without its final `CRLF CRLF`.
 * @returns The head.
 * @throws {HttpProtocolError} For anything that is not a well-formed
 *   HTTP/1.x request head.
 */
export function parseHead(bytes: Uint8Array): RequestHead {
  const lines = headText(bytes).split("\r\n");
  // Empty lines before a request line are allowed (RFC 9112 2.2).
  let first = 0;
  while (first < lines.length - 1 && lines[first] === "") first++;
  const parts = lines[first].split(" ");
  if (parts.length !== 3) {
    throw new HttpProtocolError(400, "Malformed request line");
  }
  const [method, rawTarget, version] = parts;
  if (!TOKEN.test(method)) throw new HttpProtocolError(400, "Malformed method");
  if (version !== "HTTP/1.1" && version !== "HTTP/1.0") {
    throw new HttpProtocolError(
      /^HTTP\/\d\.\d$/.test(version) ? 505 : 400,
      `Unsupported protocol version ${JSON.stringify(version)}: use HTTP/1.1`,
    );
  }
  if (!TARGET.test(rawTarget)) {
    throw new HttpProtocolError(400, "Malformed request target");
  }
  const target = originForm(rawTarget);
  if (lines.length - first - 1 > MAX_HEADER_COUNT) {
    throw new HttpProtocolError(
      431,
      `More than ${MAX_HEADER_COUNT} header lines`,
    );
  }
  const headers: [string, string][] = [];
  let contentLength: number | null = null;
  let transferEncoding: string | null = null;
  let connection = "";
  let expect: string | null = null;
  let hosts = 0;
  for (let i = first + 1; i < lines.length; i++) {
    const line = lines[i];
    const colon = line.indexOf(":");
    if (colon <= 0) {
      throw new HttpProtocolError(
        400,
        line[0] === " " || line[0] === "\t"
          ? "Folded header lines are not accepted"
          : "Malformed header line",
      );
    }
    const name = line.slice(0, colon).toLowerCase();
    if (!TOKEN.test(name)) {
      throw new HttpProtocolError(400, "Malformed header name");
    }
    const value = trimOws(line, colon + 1);
    if (BAD_VALUE.test(value)) {
      throw new HttpProtocolError(400, `Control bytes in header ${name}`);
    }
    headers.push([name, value]);
    switch (name) {
      case "content-length": {
        const n = lengthOf(value);
        if (contentLength !== null && contentLength !== n) {
          throw new HttpProtocolError(
            400,
            "Conflicting Content-Length headers",
          );
        }
        contentLength = n;
        break;
      }
      case "transfer-encoding":
        transferEncoding = transferEncoding === null
          ? value
          : `${transferEncoding}, ${value}`;
        break;
      case "connection":
        connection += `,${value.toLowerCase()}`;
        break;
      case "expect":
        expect = value.toLowerCase();
        break;
      case "host":
        hosts++;
        break;
    }
  }
  const http10 = version === "HTTP/1.0";
  const chunked = transferEncoding !== null;
  if (chunked) {
    const codings = transferEncoding!.split(",").map((c) =>
      c.trim().toLowerCase()
    );
    if (codings.length !== 1 || codings[0] !== "chunked") {
      throw new HttpProtocolError(
        411,
        `Transfer-Encoding ${
          JSON.stringify(transferEncoding)
        } is not accepted: send the body with a Content-Length header (or as chunked alone)`,
      );
    }
    if (contentLength !== null || http10) {
      throw new HttpProtocolError(
        400,
        contentLength !== null
          ? "Both Content-Length and Transfer-Encoding: a request read two ways is refused"
          : "Transfer-Encoding in an HTTP/1.0 request",
      );
    }
  }
  if (!http10 && hosts !== 1) {
    throw new HttpProtocolError(
      400,
      "An HTTP/1.1 request needs one Host header",
    );
  }
  if (expect !== null && expect !== "100-continue") {
    throw new HttpProtocolError(417, `Unsupported Expect: ${expect}`);
  }
  const tokens = connection === ""
    ? []
    : connection.split(",").map((t) => t.trim());
  const keepAlive = http10
    ? tokens.includes("keep-alive")
    : !tokens.includes("close");
  return {
    method,
    target,
    headers,
    contentLength,
    keepAlive,
    expectContinue: expect === "100-continue" && !http10,
    http10,
    chunked,
  };
}

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

const DIGITS = /^\d{1,15}$/;

/** A Content-Length value; a list of equal values is one (RFC 9110 8.6). */
function lengthOf(value: string): number {
  if (DIGITS.test(value)) return Number(value);
  const values = value.split(",").map((v) => v.trim());
  if (!values.every((v) => DIGITS.test(v) && v === values[0])) {
    throw new HttpProtocolError(400, "Malformed Content-Length");
  }
  return Number(values[0]);
}

/** A header value without the spaces and tabs around it. */
function trimOws(line: string, from: number): string {
  let start = from;
  let end = line.length;
  while (start < end && isOws(line.charCodeAt(start))) start++;
  while (end > start && isOws(line.charCodeAt(end - 1))) end--;
  return line.slice(start, end);
}

function isOws(c: number): boolean {
  return c === 32 || c === 9;
}

/** Reduce an absolute-form target to path and query. */
function originForm(target: string): string {
  if (target[0] === "/") return target;
  if (/^https?:\/\//i.test(target)) {
    const rest = target.slice(target.indexOf("//") + 2);
    const slash = rest.search(/[/?]/);
    if (slash < 0) return "/";
    return rest[slash] === "?" ? `/${rest.slice(slash)}` : rest.slice(slash);
  }
  throw new HttpProtocolError(400, "Malformed request target");
}

/**
 * Read a request's body (of its declared `Content-Length`).
 *
 * @param reader The connection's reader, just past the head.
 * @param head The parsed head.
 * @param limit Most body bytes accepted (chunked: data plus what its chunks are charged).
 * @param reserve Reserves body bytes in the server's memory budget as a chunked body grows (throws when it is spent).
 * @returns The body (empty when there is none).
 * @throws {HttpProtocolError} 413 past `limit`.
 * @throws {UnexpectedEndError} The client closed the connection first.
 */
export async function readRequestBody(
  reader: ByteReader,
  head: RequestHead,
  limit: number,
  reserve: (bytes: number) => void = () => {},
): Promise<Uint8Array<ArrayBuffer>> {
  if (head.chunked) return await readChunkedBody(reader, limit, reserve);
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
