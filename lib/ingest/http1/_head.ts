/**
 * Request heads, parsed strictly (RFC 9112): the request line, header lines
 * (tokens for names, no control bytes in values, no folding), and the
 * framing rules: a body has a `Content-Length`, or `Transfer-Encoding:
 * chunked` alone; any other coding gets 411, chunked beside a length or in
 * HTTP/1.0 gets 400; one `Host` in HTTP/1.1; `Expect: 100-continue` only.
 *
 * @module
 */
import { headText } from "./_reader.ts";
import { HttpProtocolError } from "./_errors.ts";

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
  const { method, target, http10 } = requestLine(lines[first]);
  if (lines.length - first - 1 > MAX_HEADER_COUNT) {
    throw new HttpProtocolError(
      431,
      `More than ${MAX_HEADER_COUNT} header lines`,
    );
  }
  const fields = headerFields(lines, first + 1);
  const chunked = fields.transferEncoding !== null;
  checkFraming(fields, http10);
  const { connection, expect } = fields;
  const tokens = connection === ""
    ? []
    : connection.split(",").map((t) => t.trim());
  const keepAlive = http10
    ? tokens.includes("keep-alive")
    : !tokens.includes("close");
  return {
    method,
    target,
    headers: fields.headers,
    contentLength: fields.contentLength,
    keepAlive,
    expectContinue: expect === "100-continue" && !http10,
    http10,
    chunked,
  };
}

/** The request line's method, target (origin-form) and version. */
function requestLine(
  line: string,
): { method: string; target: string; http10: boolean } {
  const parts = line.split(" ");
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
  return {
    method,
    target: originForm(rawTarget),
    http10: version === "HTTP/1.0",
  };
}

/** What the header lines say, beside the lines themselves. */
interface HeaderFields {
  headers: [string, string][];
  contentLength: number | null;
  transferEncoding: string | null;
  /** `Connection` tokens, each after a comma. */
  connection: string;
  expect: string | null;
  hosts: number;
}

/** Read the header lines from `from` on. */
function headerFields(lines: string[], from: number): HeaderFields {
  const f: HeaderFields = {
    headers: [],
    contentLength: null,
    transferEncoding: null,
    connection: "",
    expect: null,
    hosts: 0,
  };
  for (let i = from; i < lines.length; i++) {
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
    f.headers.push([name, value]);
    switch (name) {
      case "content-length": {
        const n = lengthOf(value);
        if (f.contentLength !== null && f.contentLength !== n) {
          throw new HttpProtocolError(
            400,
            "Conflicting Content-Length headers",
          );
        }
        f.contentLength = n;
        break;
      }
      case "transfer-encoding":
        f.transferEncoding = f.transferEncoding === null
          ? value
          : `${f.transferEncoding}, ${value}`;
        break;
      case "connection":
        f.connection += `,${value.toLowerCase()}`;
        break;
      case "expect":
        f.expect = value.toLowerCase();
        break;
      case "host":
        f.hosts++;
        break;
    }
  }
  return f;
}

/** Refuse a body framed two ways or by another coding, a missing Host, an unknown expectation. */
function checkFraming(f: HeaderFields, http10: boolean): void {
  const te = f.transferEncoding;
  if (te !== null) {
    const codings = te.split(",").map((c) => c.trim().toLowerCase());
    if (codings.length !== 1 || codings[0] !== "chunked") {
      throw new HttpProtocolError(
        411,
        `Transfer-Encoding ${
          JSON.stringify(te)
        } is not accepted: send the body with a Content-Length header (or as chunked alone)`,
      );
    }
    if (f.contentLength !== null || http10) {
      throw new HttpProtocolError(
        400,
        f.contentLength !== null
          ? "Both Content-Length and Transfer-Encoding: a request read two ways is refused"
          : "Transfer-Encoding in an HTTP/1.0 request",
      );
    }
  }
  if (!http10 && f.hosts !== 1) {
    throw new HttpProtocolError(
      400,
      "An HTTP/1.1 request needs one Host header",
    );
  }
  if (f.expect !== null && f.expect !== "100-continue") {
    throw new HttpProtocolError(417, `Unsupported Expect: ${f.expect}`);
  }
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
