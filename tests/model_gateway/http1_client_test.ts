/**
 * The gateway's own HTTP/1.1 client for loopback upstreams
 * (`lib/model_gateway/http1_client/`) reading answers, against a scripted
 * upstream on 127.0.0.1: which URLs it takes, every way a body ends (length,
 * chunks with extensions and trailers, the connection's end, none), interim
 * answers, gzip, malformed answers; and the gateway answering and recording
 * alike through it and through `fetch`. Its connections:
 * `http1_client_connections_test.ts`.
 */
import { assertEquals, assertOk, assertRejects } from "../_assert.ts";
import { waitFor } from "../_wait.ts";
import { chat, events, KEY, upstream } from "./_faults.ts";
import { startServer } from "../_server.ts";
import { Http1Client } from "../../lib/model_gateway/http1_client/client.ts";
import { call, enc, ok, pieces, scripted, text } from "./_scripted_upstream.ts";

Deno.test("Http1Client: takes plain http to loopback hosts only", () => {
  for (
    const u of [
      "http://127.0.0.1:8080/v1",
      "http://127.3.4.5/v1",
      "http://localhost:11434",
      "http://[::1]:9/x",
    ]
  ) assertOk(Http1Client.takes(new URL(u)), u);
  for (
    const u of [
      "https://127.0.0.1/v1",
      "https://api.openai.com/v1",
      "http://10.0.0.2:8000/v1",
      "http://example.com",
      "http://127.0.0.1.example.com/",
    ]
  ) assertOk(!Http1Client.takes(new URL(u)), u);
});

Deno.test("Http1Client: sends one request as given and reads a body of its length; the connection carries the next", async () => {
  const up = scripted((req) => ({ bytes: ok(`{"echo":${req.body}}`) }));
  const client = new Http1Client();
  try {
    const a = await client.send(call(up.url, '{"n":1}'));
    assertEquals(a.status, 200);
    assertEquals(a.headers.get("Content-Type"), "application/json");
    assertEquals(await text(a), '{"echo":{"n":1}}');
    const b = await client.send(call(up.url, '{"n":2}'));
    assertEquals(await text(b), '{"echo":{"n":2}}');
    assertEquals(up.accepted, 1);
    const head = up.seen[0].head.split("\r\n");
    assertEquals(head[0], "POST /v1/chat/completions HTTP/1.1");
    assertOk(head.includes(`host: ${new URL(up.url).host}`), head.join("|"));
    assertOk(head.includes("x-a: b"), head.join("|"));
    assertOk(head.includes("content-length: 7"), head.join("|"));
    assertEquals(up.seen[1].body, '{"n":2}');
  } finally {
    client.close();
    await up.close();
  }
});

Deno.test("Http1Client: a chunked answer comes piece by piece, extensions and trailers read and dropped; interim answers are skipped", async () => {
  const up = scripted(() => ({
    bytes: "HTTP/1.1 100 Continue\r\n\r\n" +
      "HTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\n" +
      "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n" +
      "6 ;ext=1\r\ndata: \r\n" + "3\r\nabc\r\n" + "A\r\n0123456789\r\n" +
      "0\r\nx-trailer: 1\r\n\r\n",
  }));
  const client = new Http1Client();
  try {
    const a = await client.send(call(up.url));
    assertEquals(a.status, 200);
    assertEquals((await pieces(a)).join(""), "data: abc0123456789");
    // Read to its end: the connection is kept and carries the next.
    assertEquals(
      (await pieces(await client.send(call(up.url)))).join(""),
      "data: abc0123456789",
    );
    assertEquals(up.accepted, 1);
  } finally {
    client.close();
    await up.close();
  }
});

Deno.test("Http1Client: a body that ends with the connection, a 204 with none, and a gzip body decoded", async () => {
  const gz = new Uint8Array(
    await new Response(
      new Blob([enc.encode('{"zipped":true}')]).stream().pipeThrough(
        new CompressionStream("gzip"),
      ),
    ).arrayBuffer(),
  );
  let n = 0;
  const up = scripted(() => {
    n++;
    if (n === 1) {
      return { bytes: "HTTP/1.1 200 OK\r\n\r\nuntil the end", close: true };
    }
    if (n === 2) return { bytes: "HTTP/1.1 204 No Content\r\n\r\n" };
    const head = enc.encode(
      `HTTP/1.1 200 OK\r\ncontent-encoding: gzip\r\ncontent-length: ${gz.length}\r\n\r\n`,
    );
    const all = new Uint8Array(head.length + gz.length);
    all.set(head);
    all.set(gz, head.length);
    return { bytes: all };
  });
  const client = new Http1Client();
  try {
    assertEquals(await text(await client.send(call(up.url))), "until the end");
    const none = await client.send(call(up.url));
    assertEquals([none.status, none.body], [204, null]);
    assertEquals(
      await text(await client.send(call(up.url))),
      '{"zipped":true}',
    );
    // The first answer ended with its connection; the 204's was kept.
    assertEquals(up.accepted, 2);
  } finally {
    client.close();
    await up.close();
  }
});

Deno.test("Http1Client: a malformed answer or one cut short is an error that says so, and its connection is closed", async () => {
  const answers = [
    "HTTP/2 200\r\n\r\n",
    "HTTP/1.1 200 OK\r\nbad header\r\ncontent-length: 0\r\n\r\n",
    "HTTP/1.1 200 OK\r\ntransfer-encoding: gzip\r\n\r\n",
    "HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nshort",
    "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n",
    // 14 hex digits: past what a size may have.
    "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n10000000000000\r\n",
    // A control byte is no digit.
    "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n\x10\r\n",
  ];
  let n = 0;
  const up = scripted(() => ({ bytes: answers[n++], close: true }));
  const client = new Http1Client();
  try {
    await assertRejects(
      () => client.send(call(up.url)),
      /not valid HTTP\/1\.1: the status line/,
    );
    await assertRejects(
      () => client.send(call(up.url)),
      /the header line/,
    );
    await assertRejects(
      () => client.send(call(up.url)),
      /the transfer coding gzip/,
    );
    const short = await client.send(call(up.url));
    await assertRejects(
      () => short.bytes(),
      /closed the connection in the middle of an answer's body/,
    );
    for (let i = 0; i < 3; i++) {
      const chunks = await client.send(call(up.url));
      await assertRejects(() => pieces(chunks), /the chunk size/);
    }
    await waitFor("every connection closed", () => client.open === 0);
    assertEquals(up.accepted, 7);
  } finally {
    client.close();
    await up.close();
  }
});

Deno.test("the gateway answers and records alike through its own client and through fetch (ownClient: false)", async () => {
  const sse = [
    { choices: [{ index: 0, delta: { role: "assistant", content: "Hel" } }] },
    {
      choices: [{ index: 0, delta: { content: "lo" }, finish_reason: "stop" }],
    },
  ].map((c) =>
    `data: ${
      JSON.stringify({
        id: "s1",
        object: "chat.completion.chunk",
        created: 1,
        model: "m",
        ...c,
      })
    }\n\n`
  )
    .join("") + "data: [DONE]\n\n";
  const up = upstream(async (req) => {
    const body = await req.json();
    if (body.stream) {
      return new Response(
        new ReadableStream({
          start(ctrl) {
            for (const line of sse.split(/(?<=\n\n)/)) {
              ctrl.enqueue(enc.encode(line));
            }
            ctrl.close();
          },
        }),
        { headers: { "content-type": "text/event-stream" } },
      );
    }
    return Response.json(chat("Hi there"), { headers: { "x-up": "1" } });
  });
  const seen: { own: boolean; answers: string[]; kinds: string[] }[] = [];
  try {
    for (const own of [true, false]) {
      await using s = await startServer({
        modelGateway: {
          upstreamOpenai: `${up.url}/v1`,
          ...(own ? {} : { ownClient: false }),
        },
      });
      const answers: string[] = [];
      for (const stream of [false, true]) {
        const res = await fetch(`${s.url}/v1/chat/completions`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            authorization: `Bearer ${KEY}`,
          },
          body: JSON.stringify({
            model: "m",
            stream,
            messages: [{ role: "user", content: stream ? "again" : "hi" }],
          }),
        });
        assertEquals(res.status, 200);
        if (!stream) assertEquals(res.headers.get("x-up"), "1");
        answers.push(await res.text());
      }
      await s.server.modelGateway!.settled();
      const caps = s.store.listCaptures();
      assertEquals(caps.length, 1);
      const evs = await events(s, caps[0].capture_id);
      seen.push({ own, answers, kinds: evs.map((e) => e.kind) });
      assertOk(!JSON.stringify(evs).includes(KEY));
    }
  } finally {
    await up.close();
  }
  assertEquals(seen[0].answers, [JSON.stringify(chat("Hi there")), sse]);
  assertEquals(seen[1].answers, seen[0].answers);
  assertOk(
    seen[0].kinds.filter((k) => k === "model.responded").length === 2,
    seen[0].kinds.join(),
  );
  assertEquals(seen[1].kinds, seen[0].kinds);
});
