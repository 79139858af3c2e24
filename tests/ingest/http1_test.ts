import { assertEquals, assertMatch, assertOk } from "../_assert.ts";
import { startServer } from "../_server.ts";
import { messageEventJson } from "../_helpers.ts";
import { waitFor } from "../_wait.ts";

const event = (id: string) => messageEventJson(id, "c_http1");

const enc = new TextEncoder();
const dec = new TextDecoder();

function portOf(url: string): number {
  return Number(new URL(url).port);
}

async function connect(url: string): Promise<Deno.TcpConn> {
  return await Deno.connect({ hostname: "127.0.0.1", port: portOf(url) });
}

/** Everything the server sends until it closes (or `ms` pass: then null). */
async function untilClosed(
  conn: Deno.TcpConn,
  ms = 30_000,
): Promise<string | null> {
  const buf = new Uint8Array(65536);
  let text = "";
  const timer = setTimeout(() => conn.close(), ms);
  try {
    for (;;) {
      const n = await conn.read(buf);
      if (n === null) return text;
      text += dec.decode(buf.subarray(0, n));
    }
  } catch {
    return null; // closed by the timer: the server kept it open
  } finally {
    clearTimeout(timer);
    try {
      conn.close();
    } catch { /* closed */ }
  }
}

/** Read until `text` has `count` complete responses (by Content-Length). */
async function responses(conn: Deno.TcpConn, count: number): Promise<string[]> {
  const buf = new Uint8Array(65536);
  let text = "";
  const out: string[] = [];
  while (out.length < count) {
    const end = text.indexOf("\r\n\r\n");
    if (end >= 0) {
      const len = Number(
        /content-length: (\d+)/i.exec(text.slice(0, end))?.[1] ?? 0,
      );
      if (text.length >= end + 4 + len) {
        out.push(text.slice(0, end + 4 + len));
        text = text.slice(end + 4 + len);
        continue;
      }
    }
    const n = await conn.read(buf);
    if (n === null) throw new Error(`closed after ${out.length} responses`);
    text += dec.decode(buf.subarray(0, n));
  }
  return out;
}

function post(url: string, body: string, extra = ""): string {
  return `POST /ingest HTTP/1.1\r\nHost: ${
    new URL(url).host
  }\r\nContent-Type: application/json\r\nContent-Length: ${
    enc.encode(body).length
  }\r\n${extra}\r\n${body}`;
}

Deno.test("http1: an idle connection is closed after the idle time-out, and /health counts it", async () => {
  await using srv = await startServer({ idleTimeoutMs: 300 });
  const conn = await connect(srv.url);
  // Closed by the server (null: still open after 30 s, the client's timer).
  assertEquals(await untilClosed(conn), "", "closed without a word");
  const health = await (await fetch(`${srv.url}/health`)).json();
  assertOk(health.stats.connections.idle_closed >= 1);
});

Deno.test("http1: a head sent a byte at a time is cut off at the head time-out; a body that stalls at the request time-out; nothing is stored", async () => {
  await using srv = await startServer({
    headersTimeoutMs: 400,
    requestTimeoutMs: 800,
  });
  const slow = await connect(srv.url);
  // A head that takes a minute at a byte per 50 ms: the server cuts it off
  // long before (the behaviour under test, not how soon).
  const head = `POST /ingest HTTP/1.1\r\nHost: ${
    new URL(srv.url).host
  }\r\nX-Pad: ${"p".repeat(1200)}\r\n`;
  let cut = false;
  for (const byte of enc.encode(head)) {
    try {
      await slow.write(new Uint8Array([byte]));
    } catch {
      cut = true;
      break;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  assertOk(cut, "the slow head was cut off before it was written");
  try {
    slow.close();
  } catch { /* closed */ }

  const stall = await connect(srv.url);
  const body = event("evt_stalled");
  const whole = post(srv.url, body);
  await stall.write(enc.encode(whole.slice(0, whole.length - 10)));
  assertEquals(await untilClosed(stall), "", "closed, unanswered");
  const health = await (await fetch(`${srv.url}/health`)).json();
  assertOk(health.stats.connections.timed_out >= 2, JSON.stringify(health));
  assertEquals(srv.store.listCaptures().length, 0);
});

Deno.test("http1: at the connection cap the longest-idle connection makes room; with none idle a new one gets 503 with Retry-After", async () => {
  await using srv = await startServer({ maxConnections: 3 });
  const host = new URL(srv.url).host;
  // Three idle connections fill the cap; a fourth is still served.
  const conns = () => srv.server.stats!.connections!;
  const idle = [await connect(srv.url)];
  await waitFor("the first connection taken in", () => conns().accepted === 1);
  idle.push(await connect(srv.url), await connect(srv.url));
  await waitFor("three connections taken in", () => conns().accepted === 3);
  const fourth = await connect(srv.url);
  await fourth.write(enc.encode(post(srv.url, event("evt_cap_1"))));
  const [ok] = await responses(fourth, 1);
  assertMatch(ok, /^HTTP\/1\.1 200 OK/);
  assertEquals(await untilClosed(idle[0]), "", "the oldest gave way");
  // Now three connections in the middle of a request: none is idle.
  for (const c of [...idle.slice(1), fourth]) c.close();
  await waitFor("every connection gone", () => conns().open === 0);
  const busy: Deno.TcpConn[] = [];
  for (let i = 0; i < 3; i++) {
    const c = await connect(srv.url);
    await c.write(enc.encode(`POST /ingest HTTP/1.1\r\nHost: ${host}\r\n`));
    busy.push(c);
  }
  await waitFor(
    "three connections in a request",
    () => conns().in_request === 3,
  );
  const refused = await untilClosed(await connect(srv.url));
  assertMatch(refused!, /^HTTP\/1\.1 503 /);
  assertMatch(refused!, /retry-after: 1/i);
  assertMatch(refused!, /"ok":false/);
  for (const c of busy) c.close();
  await waitFor("the busy connections gone", () => conns().open === 0);
  const health = await (await fetch(`${srv.url}/health`)).json();
  const c = health.stats.connections;
  assertOk(c.evicted >= 1 && c.refused >= 1, JSON.stringify(c));
  assertEquals(c.max, 3);
  const ids = [];
  for await (const ev of srv.store.readEvents("c_http1")) ids.push(ev.event_id);
  assertEquals(ids, ["evt_cap_1"]);
});

Deno.test("http1: 300 keep-alive clients at once are all kept, each asking twice: the default cap leaves a client pool room for the connections it opens beyond its requests", async () => {
  await using srv = await startServer();
  const host = new URL(srv.url).host;
  const ask = enc.encode(`GET /health HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
  const conns: Deno.TcpConn[] = [];
  try {
    for (let i = 0; i < 300; i++) {
      const c = await connect(srv.url);
      conns.push(c);
      await c.write(ask);
      const [first] = await responses(c, 1);
      assertMatch(first, /^HTTP\/1\.1 200 OK/);
    }
    // Every connection is still open: the second request on each is answered.
    for (const c of conns) {
      await c.write(ask);
      const [again] = await responses(c, 1);
      assertMatch(again, /^HTTP\/1\.1 200 OK/);
    }
    const c = srv.server.stats!.connections!;
    assertEquals([c.accepted, c.evicted, c.refused], [300, 0, 0]);
  } finally {
    for (const c of conns) c.close();
  }
});

Deno.test("http1: keep-alive, pipelined requests, Expect: 100-continue and HTTP/1.0 are all served in order; a streamed (chunked) body is read", async () => {
  await using srv = await startServer();
  const conn = await connect(srv.url);
  // Two requests in one write: two answers, in order.
  await conn.write(
    enc.encode(post(srv.url, event("evt_p1")) + post(srv.url, event("evt_p2"))),
  );
  const two = await responses(conn, 2);
  assertMatch(two[0], /"sequence":1/);
  assertMatch(two[1], /"sequence":2/);
  // Expect: 100-continue: the body goes only after the interim answer.
  const body = event("evt_p3");
  await conn.write(
    enc.encode(
      `POST /ingest HTTP/1.1\r\nHost: ${
        new URL(srv.url).host
      }\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`,
    ),
  );
  const buf = new Uint8Array(1024);
  const n = await conn.read(buf);
  assertMatch(
    dec.decode(buf.subarray(0, n!)),
    /^HTTP\/1\.1 100 Continue\r\n\r\n$/,
  );
  await conn.write(enc.encode(body));
  assertMatch((await responses(conn, 1))[0], /"sequence":3/);
  conn.close();
  // A chunked body, as fetch (and OpenTelemetry's exporters) send a stream.
  const stream = ReadableStream.from(
    [event("evt_p3c")].map((t) => enc.encode(t)),
  );
  const streamed = await fetch(`${srv.url}/ingest`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: stream,
  });
  assertEquals(streamed.status, 200);
  await streamed.body?.cancel();
  const res = await fetch(`${srv.url}/ingest`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: event("evt_p4"),
  });
  assertEquals(res.status, 200);
  assertEquals((await res.json()).events[0].sequence, 5);
  // HTTP/1.0: answered, then closed.
  const old = await connect(srv.url);
  await old.write(
    enc.encode(post(srv.url, event("evt_p5")).replace("HTTP/1.1", "HTTP/1.0")),
  );
  const text = await untilClosed(old);
  assertMatch(text!, /^HTTP\/1\.1 200 OK/);
  assertMatch(text!, /connection: close/);
  const ids = [];
  for await (const ev of srv.store.readEvents("c_http1")) ids.push(ev.event_id);
  assertEquals(ids, [
    "evt_p1",
    "evt_p2",
    "evt_p3",
    "evt_p3c",
    "evt_p4",
    "evt_p5",
  ]);
});

Deno.test("http1: requests that could be read two ways, or not at all, get a 4xx/5xx and a closed connection; nothing is stored", async () => {
  await using srv = await startServer({ maxBodyBytes: 4096 });
  const host = new URL(srv.url).host;
  const body = event("evt_bad");
  const cases: [string, RegExp][] = [
    // Smuggling: both lengths.
    [
      `POST /ingest HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nTransfer-Encoding: chunked\r\n\r\n${body}`,
      /^HTTP\/1\.1 400 /,
    ],
    // Two different lengths.
    [
      `POST /ingest HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n{}`,
      /^HTTP\/1\.1 400 /,
    ],
    // A folded header line.
    [
      `POST /ingest HTTP/1.1\r\nHost: ${host}\r\nX-A: 1\r\n  folded\r\n\r\n`,
      /^HTTP\/1\.1 400 /,
    ],
    // No Host.
    [`GET /health HTTP/1.1\r\n\r\n`, /^HTTP\/1\.1 400 /],
    // An unknown version.
    [`GET /health HTTP/2.0\r\nHost: ${host}\r\n\r\n`, /^HTTP\/1\.1 505 /],
    // Another transfer coding.
    [
      `POST /ingest HTTP/1.1\r\nHost: ${host}\r\nTransfer-Encoding: gzip\r\n\r\n`,
      /^HTTP\/1\.1 411 /,
    ],
    // A chunked body whose size line is not hex.
    [
      `POST /ingest HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n${body}\r\n0\r\n\r\n`,
      /^HTTP\/1\.1 400 /,
    ],
    // A head past 16 KiB.
    [
      `GET /health HTTP/1.1\r\nHost: ${host}\r\nX-Big: ${
        "a".repeat(17000)
      }\r\n\r\n`,
      /^HTTP\/1\.1 431 /,
    ],
    // A body past the limit, announced: refused before it is sent.
    [
      `POST /ingest HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: 5000\r\nExpect: 100-continue\r\n\r\n`,
      /^HTTP\/1\.1 413 /,
    ],
    // Another expectation.
    [
      `POST /ingest HTTP/1.1\r\nHost: ${host}\r\nExpect: magic\r\nContent-Length: 0\r\n\r\n`,
      /^HTTP\/1\.1 417 /,
    ],
  ];
  for (const [request, status] of cases) {
    const conn = await connect(srv.url);
    await conn.write(enc.encode(request)).catch(() => 0);
    const text = await untilClosed(conn);
    assertOk(text !== null, `closed after: ${request.slice(0, 80)}`);
    assertMatch(text, status, request.slice(0, 120));
    assertMatch(text, /connection: close/);
    assertMatch(text, /"ok":false,"error":"/);
  }
  assertEquals(srv.store.listCaptures().length, 0);
  const health = await (await fetch(`${srv.url}/health`)).json();
  assertEquals(health.stats.connections.malformed, cases.length);
});

// The server ends its side and drops the rest for a moment rather than close
// with unread bytes (a reset). Linux keeps data already received after a
// reset, so this passes here either way; the linger is for other stacks.
Deno.test("http1: a client still sending a body past the limit reads its 413", async () => {
  await using srv = await startServer({ maxBodyBytes: 4096 });
  const host = new URL(srv.url).host;
  for (let round = 0; round < 5; round++) {
    const conn = await connect(srv.url);
    const body = "x".repeat(512 * 1024);
    const sending = conn.write(
      enc.encode(
        `POST /ingest HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      ),
    ).catch(() => 0);
    const text = await untilClosed(conn);
    await sending;
    assertMatch(text ?? "", /^HTTP\/1\.1 413 /);
  }
});

Deno.test("http1: request bodies in memory over all connections stay within a budget: past it 503 with Retry-After, and the budget frees when bodies are answered", async () => {
  await using srv = await startServer({
    maxBodyBytes: 8000,
    maxBufferedBodyBytes: 10_000,
  });
  const host = new URL(srv.url).host;
  const head = (length: number, extra = "") =>
    `POST /ingest HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n${extra}\r\n`;
  // One body of 6,000 bytes on its way holds 6,000 of the 10,000.
  const first = await connect(srv.url);
  await first.write(enc.encode(head(6000) + "{"));
  await waitFor(
    "the first body's 6,000 bytes held",
    () => srv.server.stats!.connections!.body_bytes_held === 6000,
  );
  // A second of 6,000 would pass the budget: refused before its body.
  const second = await connect(srv.url);
  await second.write(enc.encode(head(6000, "Expect: 100-continue\r\n")));
  const refused = await untilClosed(second);
  assertMatch(refused!, /^HTTP\/1\.1 503 /);
  assertMatch(refused!, /retry-after: 1/i);
  // The first finishes (a bad event: 422), and the budget is free again.
  await first.write(enc.encode(" ".repeat(5999)));
  assertMatch((await responses(first, 1))[0], /^HTTP\/1\.1 (400|422) /);
  first.close();
  const body = event("evt_budget").padEnd(6000, " ");
  const third = await connect(srv.url);
  await third.write(enc.encode(post(srv.url, body)));
  assertMatch((await responses(third, 1))[0], /^HTTP\/1\.1 200 /);
  third.close();
  const health = await (await fetch(`${srv.url}/health`)).json();
  assertEquals(health.stats.connections.over_body_budget, 1);
  assertEquals(health.stats.connections.malformed, 0);
});
