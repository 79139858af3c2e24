import { assertEquals, assertMatch, assertOk } from "../_assert.ts";
import { startServer } from "../_server.ts";
import { messageEventJson } from "../_helpers.ts";
import { Http1Server, type IngestAnswer } from "../../lib/ingest/http1/mod.ts";
import { DEFAULT_HANDLER_TIMEOUT_MS } from "../../lib/ingest/http1/_options.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

const json = (status: number, body: unknown): IngestAnswer => ({
  status,
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});

/** Everything the server sends until it ends its side. */
async function readToEnd(conn: Deno.TcpConn): Promise<string> {
  const buf = new Uint8Array(65536);
  let text = "";
  for (;;) {
    const n = await conn.read(buf).catch(() => null);
    if (n === null) return text;
    text += dec.decode(buf.subarray(0, n));
  }
}

/**
 * Write `body` after the answer came, then keep writing until the server
 * has closed the connection (a write fails): by then it has read all of
 * the request it ever will.
 */
async function sendUntilClosed(
  conn: Deno.TcpConn,
  body: Uint8Array,
): Promise<void> {
  try {
    for (let at = 0; at < body.length;) {
      at += await conn.write(body.subarray(at, at + 256 * 1024));
    }
    const more = new Uint8Array(64 * 1024);
    for (let i = 0; i < 100_000; i++) await conn.write(more);
    throw new Error("The server never closed the connection");
  } catch (err) {
    if (
      !(err instanceof Deno.errors.BrokenPipe) &&
      !(err instanceof Deno.errors.ConnectionReset)
    ) throw err;
  }
}

/** A chunked request head for `host`. */
function chunkedHead(host: string, te = "chunked"): string {
  return `POST /ingest HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nTransfer-Encoding: ${te}\r\n\r\n`;
}

Deno.test("http1: chunked bodies llhttp refuses (an empty extension name, an extension flood, an empty Transfer-Encoding) are refused with what is wrong; nothing is stored", async () => {
  await using srv = await startServer();
  const url = new URL(srv.url);
  const body = messageEventJson("evt_te", "c_te");
  const cases: [string, string, RegExp, RegExp][] = [
    // `2;`: an extension without a name.
    [
      chunkedHead(url.host),
      `2;\r\n{}\r\n0\r\n\r\n`,
      /^HTTP\/1\.1 400 /,
      /A chunk extension needs a name/,
    ],
    // An extension flood: 400 KB of extensions around a 100-byte body.
    [
      chunkedHead(url.host),
      `${body.length.toString(16)};${
        "a=b;".repeat(100_000)
      }x\r\n${body}\r\n0\r\n\r\n`,
      /^HTTP\/1\.1 400 /,
      /A chunk line is longer than 4096 bytes/,
    ],
    // An empty Transfer-Encoding: refused from the head alone.
    [
      chunkedHead(url.host, ""),
      body,
      /^HTTP\/1\.1 411 Length Required\r\n/,
      /Transfer-Encoding .* is not accepted/,
    ],
  ];
  for (const [head, rest, status, why] of cases) {
    const conn = await Deno.connect({
      hostname: "127.0.0.1",
      port: Number(url.port),
    });
    await conn.write(enc.encode(head));
    const sending = sendUntilClosed(conn, enc.encode(rest));
    const text = await readToEnd(conn);
    await sending;
    conn.close();
    assertMatch(text, status, head);
    assertMatch(text, /connection: close/);
    assertMatch(text, why);
  }
  assertEquals(srv.store.listCaptures().length, 0);
  const health = await (await fetch(`${srv.url}/health`)).json();
  assertEquals(health.stats.connections.malformed, cases.length);
});

/**
 * `VmRSS` and `VmHWM` (peak) of a process, in KiB. Read through `cat`: Deno
 * asks for all permissions to read another process's `/proc` files.
 */
async function memoryOf(pid: number): Promise<{ rss: number; peak: number }> {
  const out = await new Deno.Command("cat", {
    args: [`/proc/${pid}/status`],
    stdout: "piped",
  }).output();
  const status = dec.decode(out.stdout);
  const kib = (name: string) =>
    Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1]);
  return { rss: kib("VmRSS"), peak: kib("VmHWM") };
}

Deno.test({
  name:
    "http1: a 1 MB body sent one byte per chunk is refused (413: each chunk is charged against the body limit); the server's memory grows by less than 2 MB",
  ignore: Deno.build.os !== "linux",
  async fn() {
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--quiet",
        "--allow-net=127.0.0.1",
        new URL("./_http1_rss_server.ts", import.meta.url).pathname,
      ],
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const stdin = child.stdin.getWriter();
    try {
      const lines = child.stdout.pipeThrough(new TextDecoderStream())
        .getReader();
      let first = "";
      while (!first.includes("\n")) {
        const { value, done } = await lines.read();
        if (done) throw new Error("The server process ended before its port");
        first += value;
      }
      lines.releaseLock();
      child.stdout.cancel().catch(() => {});
      const port = Number(first.trim());
      const host = `127.0.0.1:${port}`;
      // Warm up: the paths the measured request takes, and a normal one,
      // often enough (~1.2 MiB of one-byte chunks) that the heap's young
      // generation has grown to such traffic (V8 sizes it by use): that
      // growth is not memory a request holds.
      for (let i = 0; i < 200; i++) {
        const res = await fetch(`http://${host}/ingest`, {
          method: "POST",
          body: "{}",
        });
        assertEquals(res.status, 200);
        await res.body?.cancel();
        const conn = await Deno.connect({ hostname: "127.0.0.1", port });
        await conn.write(
          enc.encode(
            chunkedHead(host) + "1\r\nx\r\n".repeat(1000) + "0\r\n\r\n",
          ),
        );
        assertMatch(await readUntil(conn, '{"ok":true}'), /^HTTP\/1\.1 200 /);
        conn.close();
      }
      const before = await memoryOf(child.pid);
      // 1 MiB of data, one byte per chunk: 6 MiB on the wire.
      const body = enc.encode("1\r\nx\r\n".repeat(1024 * 1024) + "0\r\n\r\n");
      const conn = await Deno.connect({ hostname: "127.0.0.1", port });
      await conn.write(enc.encode(chunkedHead(host)));
      const sending = sendUntilClosed(conn, body);
      const text = await readToEnd(conn);
      await sending;
      conn.close();
      assertMatch(text, /^HTTP\/1\.1 413 /);
      assertMatch(text, /charged 1024 bytes per chunk/);
      // The server still answers (and has finished with that connection).
      const res = await fetch(`http://${host}/ingest`, {
        method: "POST",
        body: "{}",
      });
      assertEquals(res.status, 200);
      await res.body?.cancel();
      const after = await memoryOf(child.pid);
      const grew = {
        rss: after.rss - before.rss,
        peak: after.peak - before.peak,
      };
      assertOk(grew.rss < 2048, `RSS grew by ${grew.rss} KiB`);
      assertOk(grew.peak < 2048, `peak RSS grew by ${grew.peak} KiB`);
    } finally {
      await stdin.close().catch(() => {});
      await child.status;
    }
  },
});

Deno.test("Http1Server: a handler that never answers gets its request a 503 at handlerTimeoutMs and the connection closed; its body stays counted until it ends; shutdown does not wait for it", async () => {
  assertEquals(DEFAULT_HANDLER_TIMEOUT_MS, 30_000);
  let release = () => {};
  const stuck = new Promise<IngestAnswer>((resolve) => {
    release = () => resolve(json(200, { ok: true, late: true }));
  });
  let calls = 0;
  const server = new Http1Server(
    (req) => {
      calls++;
      return req.target === "/stuck" ? stuck : Promise.resolve(json(200, {
        ok: true,
      }));
    },
    {
      hostname: "127.0.0.1",
      port: 0,
      maxBodyBytes: 8000,
      maxBufferedBodyBytes: 10_000,
      handlerTimeoutMs: 200,
      onError: (err) => json(500, { ok: false, error: String(err) }),
      protocolError: (err) =>
        json(err.status, { ok: false, error: err.message }),
    },
  );
  const { port } = server.addr;
  const request = (path: string, length: number) =>
    enc.encode(
      `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Length: ${length}\r\n\r\n${
        "x".repeat(length)
      }`,
    );
  try {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    await conn.write(request("/stuck", 6000));
    const text = await readToEnd(conn);
    conn.close();
    assertMatch(text, /^HTTP\/1\.1 503 Service Unavailable\r\n/);
    assertMatch(text, /connection: close/);
    assertMatch(text, /"error":"The request was not answered within 200 ms/);
    assertOk(!/retry-after/i.test(text), "no Retry-After for a stuck handler");
    assertEquals(server.stats.handler_timed_out, 1);
    // The stuck handler still holds its 6,000 bytes of the 10,000 budget.
    const second = await Deno.connect({ hostname: "127.0.0.1", port });
    await second.write(request("/ok", 6000));
    const busy = await readToEnd(second);
    second.close();
    assertMatch(busy, /^HTTP\/1\.1 503 /);
    assertMatch(busy, /holds 6000 bytes of request bodies/);
    // Once it ends, the budget is free again.
    release();
    await stuck;
    const third = await Deno.connect({ hostname: "127.0.0.1", port });
    await third.write(request("/ok", 6000));
    assertMatch(await readUntil(third, '{"ok":true}'), /^HTTP\/1\.1 200 /);
    third.close();
    assertEquals(calls, 2);
  } finally {
    await server.shutdown();
  }
});

Deno.test("Http1Server: shutdown with a handler that never answers ends once the handler time-out answers 503", async () => {
  let called = () => {};
  const got = new Promise<void>((resolve) => called = resolve);
  const server = new Http1Server(() => {
    called();
    return new Promise<IngestAnswer>(() => {});
  }, {
    hostname: "127.0.0.1",
    port: 0,
    maxBodyBytes: 1000,
    handlerTimeoutMs: 100,
    onError: (err) => json(500, { ok: false, error: String(err) }),
    protocolError: (err) => json(err.status, { ok: false, error: err.message }),
  });
  const conn = await Deno.connect({
    hostname: "127.0.0.1",
    port: server.addr.port,
  });
  await conn.write(
    enc.encode(
      `GET /never HTTP/1.1\r\nHost: 127.0.0.1:${server.addr.port}\r\n\r\n`,
    ),
  );
  // Once the handler has the request, shut down: the server does not wait
  // for the handler, only for its 503.
  await got;
  const closing = server.shutdown();
  assertMatch(await readToEnd(conn), /^HTTP\/1\.1 503 /);
  conn.close();
  await closing;
  assertEquals(server.stats.handler_timed_out, 1);
});

/** Read until `marker` is in what came (a keep-alive answer). */
async function readUntil(conn: Deno.TcpConn, marker: string): Promise<string> {
  const buf = new Uint8Array(65536);
  let text = "";
  while (!text.includes(marker)) {
    const n = await conn.read(buf);
    if (n === null) break;
    text += dec.decode(buf.subarray(0, n));
  }
  return text;
}
