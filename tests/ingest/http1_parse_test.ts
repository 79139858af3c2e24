import { assertEquals, assertThrows } from "../_assert.ts";
import {
  HttpProtocolError,
  parseHead,
  readRequestBody,
} from "../../lib/ingest/http1_request.ts";
import { ByteReader } from "../../lib/ingest/http1_reader.ts";

const enc = new TextEncoder();

function head(text: string) {
  return parseHead(enc.encode(text));
}

/** A reader over fixed bytes, delivered `step` bytes at a time. */
function readerOf(text: string, step = 3): ByteReader {
  const bytes = enc.encode(text);
  let at = 0;
  return new ByteReader((into) => {
    if (at >= bytes.length) return Promise.resolve(null);
    const n = Math.min(step, into.length, bytes.length - at);
    into.set(bytes.subarray(at, at + n));
    at += n;
    return Promise.resolve(n);
  }, 8);
}

Deno.test("parseHead: absolute-form targets, equal repeated lengths, spaces around values, HTTP/1.0 keep-alive", () => {
  const a = head(
    "\r\nPOST http://127.0.0.1:8848/hook/host_a?cap=c1 HTTP/1.1\r\nHost: 127.0.0.1:8848\r\nContent-Length: 5, 5\r\nX-Note: \t spaced \t",
  );
  assertEquals(a.target, "/hook/host_a?cap=c1");
  assertEquals(a.contentLength, 5);
  assertEquals(a.headers.find(([k]) => k === "x-note")?.[1], "spaced");
  assertEquals(a.keepAlive, true);
  assertEquals(head("GET http://h HTTP/1.1\r\nHost: h").target, "/");
  assertEquals(head("GET http://h?x=1 HTTP/1.1\r\nHost: h").target, "/?x=1");
  const old = head("GET /health HTTP/1.0");
  assertEquals([old.http10, old.keepAlive], [true, false]);
  assertEquals(
    head("GET /health HTTP/1.0\r\nConnection: Keep-Alive").keepAlive,
    true,
  );
  assertEquals(
    head("GET /health HTTP/1.1\r\nHost: h\r\nConnection: close").keepAlive,
    false,
  );
  const chunked = head(
    "POST /ingest HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: Chunked",
  );
  assertEquals([chunked.chunked, chunked.contentLength], [true, null]);
});

Deno.test("parseHead: each malformed head is refused with its status", () => {
  const cases: [string, number][] = [
    ["GET /health", 400],
    ["GET  /health HTTP/1.1\r\nHost: h", 400],
    ["G@T /health HTTP/1.1\r\nHost: h", 400],
    ["GET /he alth HTTP/1.1\r\nHost: h", 400],
    ["GET health HTTP/1.1\r\nHost: h", 400],
    ["GET /health HTTP/3.0\r\nHost: h", 505],
    ["GET /health HTTX/1.1\r\nHost: h", 400],
    ["GET /health HTTP/1.1\r\nHost: h\r\nHost: i", 400],
    ["GET /health HTTP/1.1\r\nHost: h\r\nBad Name: x", 400],
    ["GET /health HTTP/1.1\r\nHost: h\r\nNoColon", 400],
    ["GET /health HTTP/1.1\r\nHost: h\r\nX: a\u0001b", 400],
    ["POST /i HTTP/1.1\r\nHost: h\r\nContent-Length: -1", 400],
    ["POST /i HTTP/1.1\r\nHost: h\r\nContent-Length: 5, 6", 400],
    ["POST /i HTTP/1.0\r\nTransfer-Encoding: chunked", 400],
    ["POST /i HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked", 501],
    [
      `GET / HTTP/1.1\r\nHost: h\r\n${"X: y\r\n".repeat(100)}`,
      431,
    ],
  ];
  for (const [text, status] of cases) {
    const err = assertThrows(() => head(text), HttpProtocolError);
    assertEquals((err as HttpProtocolError).status, status, text);
  }
});

Deno.test("readRequestBody: chunked bodies with extensions and trailers, read in small pieces; lengths exactly", async () => {
  const h = head("POST /i HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked");
  const r = readerOf(
    "5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: t\r\n\r\nNEXT",
  );
  assertEquals(
    new TextDecoder().decode(await readRequestBody(r, h, 100)),
    "hello world",
  );
  // What follows the body is left for the next request.
  const rest = new Uint8Array(4);
  await r.exactly(rest);
  assertEquals(new TextDecoder().decode(rest), "NEXT");
  const fixed = head("POST /i HTTP/1.1\r\nHost: h\r\nContent-Length: 11");
  assertEquals(
    new TextDecoder().decode(
      await readRequestBody(readerOf("hello worldREST"), fixed, 100),
    ),
    "hello world",
  );
  // Past the limit, announced or chunked.
  for (
    const [h2, body] of [
      [fixed, "hello world"],
      [h, "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"],
    ] as const
  ) {
    let status = 0;
    try {
      await readRequestBody(readerOf(body), h2, 8);
    } catch (err) {
      status = (err as HttpProtocolError).status;
    }
    assertEquals(status, 413);
  }
});
