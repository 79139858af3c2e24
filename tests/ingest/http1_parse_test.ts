import {
  assertEquals,
  assertMatch,
  assertRejects,
  assertThrows,
} from "../_assert.ts";
import {
  HttpProtocolError,
  readRequestBody,
} from "../../lib/ingest/http1/_request.ts";
import { parseHead } from "../../lib/ingest/http1/_head.ts";
import { ByteReader } from "../../lib/ingest/http1/_reader.ts";

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
  assertEquals(head("POST /i HTTP/1.1\r\nHost: h").contentLength, null);
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
    ["POST /i HTTP/1.1\r\nHost: h\r\nExpect: magic", 417],
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

Deno.test("parseHead: chunked alone is read; any other coding gets 411 and chunked beside a length or in HTTP/1.0 gets 400, before the body", () => {
  for (
    const text of [
      "POST /i HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked",
      "POST /i HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: Chunked",
    ]
  ) assertEquals(head(text).chunked, true, text);
  const refused: [string, number][] = [
    // An empty Transfer-Encoding (llhttp refuses it too).
    ["POST /i HTTP/1.1\r\nHost: h\r\nTransfer-Encoding:", 411],
    ["POST /i HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: \t ", 411],
    ["POST /i HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked", 411],
    ["POST /i HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: identity", 411],
    [
      "POST /i HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked",
      411,
    ],
    // Smuggling: both lengths.
    [
      "POST /i HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nTransfer-Encoding: chunked",
      400,
    ],
    [
      "POST /i HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 5",
      400,
    ],
    ["POST /i HTTP/1.0\r\nTransfer-Encoding: chunked", 400],
  ];
  for (const [text, status] of refused) {
    const err = assertThrows(() => head(text), HttpProtocolError);
    assertEquals((err as HttpProtocolError).status, status, text);
  }
});

Deno.test("readRequestBody: a chunked body in one growing buffer; extensions need a name; a line at the limit already buffered is refused; chunks are charged against the limit", async () => {
  const chunked = head(
    "POST /i HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked",
  );
  const ok = readerOf(
    '5;a=b;c="d e"\r\nhello\r\n6\r\n world\r\n0\r\nX-T: 1\r\n\r\nNEXT',
  );
  assertEquals(
    new TextDecoder().decode(
      await readRequestBody(ok, { head: chunked, limit: 10_000 }),
    ),
    "hello world",
  );
  const status = async (wire: string, limit = 10_000) => {
    try {
      await readRequestBody(readerOf(wire), { head: chunked, limit });
      return 0;
    } catch (err) {
      return (err as HttpProtocolError).status;
    }
  };
  // An extension without a name (llhttp refuses it).
  assertEquals(await status("2;\r\n{}\r\n0\r\n\r\n"), 400);
  // An extension flood: a size line past 4,096 bytes, already buffered.
  assertEquals(
    await status(`2;${"a=b;".repeat(2000)}x\r\n{}\r\n0\r\n\r\n`),
    400,
  );
  // Not hex; data longer than its size.
  assertEquals(await status("zz\r\n{}\r\n0\r\n\r\n"), 400);
  assertEquals(await status("1\r\n{}\r\n0\r\n\r\n"), 400);
  // One byte per chunk: 1,024 bytes charged each, so 100 bytes of data in
  // 100 chunks pass a 20,000-byte limit.
  assertEquals(
    await status("1\r\nx\r\n".repeat(100) + "0\r\n\r\n", 20_000),
    413,
  );
  assertEquals(
    await status("1\r\nx\r\n".repeat(10) + "0\r\n\r\n", 20_000),
    0,
  );
});

Deno.test("readRequestBody: a body of its Content-Length, read in small pieces; what follows is left; 413 past the limit", async () => {
  const fixed = head("POST /i HTTP/1.1\r\nHost: h\r\nContent-Length: 11");
  const r = readerOf("hello worldNEXT");
  assertEquals(
    new TextDecoder().decode(
      await readRequestBody(r, { head: fixed, limit: 100 }),
    ),
    "hello world",
  );
  // What follows the body is left for the next request.
  const rest = new Uint8Array(4);
  await r.exactly(rest);
  assertEquals(new TextDecoder().decode(rest), "NEXT");
  const none = head("POST /i HTTP/1.1\r\nHost: h");
  assertEquals(
    (await readRequestBody(readerOf("NEXT"), { head: none, limit: 100 }))
      .length,
    0,
  );
  const err = await assertRejects(
    () => readRequestBody(readerOf("hello world"), { head: fixed, limit: 8 }),
    HttpProtocolError,
  );
  assertEquals((err as HttpProtocolError).status, 413);
});

Deno.test("ByteReader.head: the limit holds whether the blank line is already buffered or not", async () => {
  const limit = 64;
  for (const step of [1, 7, 4096]) {
    // A head of exactly the limit, its blank line in the same read.
    const at = "GET / HTTP/1.1\r\nX: ".padEnd(limit, "a");
    const ok = await readerOf(`${at}\r\n\r\nNEXT`, step).head(limit);
    assertEquals(ok?.length, limit, `step ${step}`);
    // One byte over, blank line buffered with it: refused, not accepted.
    const over = `${at}a\r\n\r\n`;
    const err = await assertRejects(
      () => readerOf(over, step).head(limit),
      RangeError,
    );
    assertMatch(err.message, new RegExp(`larger than ${limit} bytes`));
    // Far over, all in one read.
    await assertRejects(
      () => readerOf(`${at}${"a".repeat(1000)}\r\n\r\n`, step).head(limit),
      RangeError,
    );
  }
});
