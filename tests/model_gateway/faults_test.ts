/**
 * The model gateway under bad input and failing upstreams: the client gets
 * the upstream's answer or the API's own error shape, never a 500 of ours;
 * what cannot be recorded is counted, never lost from what was stored; the
 * client's key reaches the upstream and nothing else.
 */
import { assertEquals, assertMatch, assertOk } from "../_assert.ts";
import { startServer } from "../_server.ts";
import type { TraceEvent } from "../../lib/trace/event.ts";

const KEY = "sk-proj-NEVERSTORED0123456789abcdefABCDEF";

/** A loopback upstream whose handler the test sets. */
function upstream(
  handler: (req: Request) => Response | Promise<Response>,
): { url: string; seen: { headers: Headers }[]; close(): Promise<void> } {
  const seen: { headers: Headers }[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (req) => {
      seen.push({ headers: new Headers(req.headers) });
      return handler(req);
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    seen,
    close: () => server.shutdown(),
  };
}

const chat = (content: string) => ({
  id: "c1",
  object: "chat.completion",
  created: 1,
  model: "m",
  choices: [{
    index: 0,
    message: { role: "assistant", content },
    finish_reason: "stop",
  }],
  usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
});

async function health(url: string): Promise<Record<string, unknown>> {
  return await (await fetch(`${url}/health`)).json();
}

async function events(
  s: Awaited<ReturnType<typeof startServer>>,
  cap: string,
): Promise<TraceEvent[]> {
  await s.server.modelGateway!.settled();
  const out: TraceEvent[] = [];
  if (!s.store.hasCapture(cap)) return out;
  for await (const e of s.store.readEvents(cap)) out.push(e);
  return out;
}

Deno.test("bad bodies and unknown routes reach the upstream untouched; nothing of ours answers 500", async () => {
  const up = upstream(async (req) => {
    const text = await req.text();
    try {
      JSON.parse(text);
    } catch {
      return Response.json({
        error: { message: "bad json", type: "invalid_request_error" },
      }, { status: 400 });
    }
    if (new URL(req.url).pathname !== "/v1/chat/completions") {
      return Response.json({ error: { message: "no such route" } }, {
        status: 404,
      });
    }
    return Response.json(chat("fine"));
  });
  await using s = await startServer({
    modelGateway: { upstreamOpenai: `${up.url}/v1` },
  });
  const send = (path: string, body: string) =>
    fetch(`${s.url}${path}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${KEY}`,
        "x-harness-capture": "bad",
      },
      body,
    });
  // Something recorded first: it must survive what follows.
  const first = await send(
    "/v1/chat/completions",
    JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] }),
  );
  assertEquals((await first.json()).choices[0].message.content, "fine");
  const notJson = await send("/v1/chat/completions", "{not json");
  assertEquals(notJson.status, 400);
  assertEquals((await notJson.json()).error.message, "bad json");
  const wrongShape = await send(
    "/v1/chat/completions",
    JSON.stringify({ hello: "world" }),
  );
  assertEquals(wrongShape.status, 200); // the upstream's answer, as it came
  await wrongShape.body?.cancel();
  const unknown = await send("/v1/embeddings", JSON.stringify({ input: "x" }));
  assertEquals(unknown.status, 404);
  assertEquals((await unknown.json()).error.message, "no such route");
  const noKey = await fetch(`${s.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "m", messages: [] }),
  });
  assertEquals(noKey.status, 200); // forwarded: the upstream decides
  await noKey.body?.cancel();
  assertEquals(up.seen.filter((r) => r.headers.get("authorization")).length, 4);
  const evs = await events(s, "bad");
  assertEquals(evs.filter((e) => e.kind === "model.requested").length, 1);
  const h = await health(s.url);
  const gw = h.model_gateway as Record<string, number>;
  assertEquals(gw.record_misses, 2);
  assertEquals(gw.recorded, 2); // the first, and the one without a key
  await up.close();
});

Deno.test("upstream down: 502 in the API's shape; silent: 504 within the gateway's time-out", async () => {
  // Silent until the gateway gives up (then the request is aborted).
  const silent = upstream((req) =>
    new Promise<Response>((resolve) =>
      req.signal.addEventListener(
        "abort",
        () => resolve(new Response(null, { status: 499 })),
      )
    )
  );
  // A port nothing listens on: bind one, close it.
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const dead = `http://127.0.0.1:${l.addr.port}`;
  l.close();
  await using s = await startServer({
    modelGateway: {
      upstreamOpenai: `${dead}/v1`,
      upstreamAnthropic: silent.url,
      upstreamTimeoutMs: 300,
    },
  });
  const down = await fetch(`${s.url}/v1/chat/completions`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${KEY}`,
    },
    body: JSON.stringify({ model: "m", messages: [] }),
  });
  assertEquals(down.status, 502);
  const err = await down.json();
  assertEquals(err.error.type, "api_error");
  assertOk(!JSON.stringify(err).includes(KEY));
  const t0 = Date.now();
  const slow = await fetch(`${s.url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": KEY },
    body: JSON.stringify({ model: "m", max_tokens: 5, messages: [] }),
  });
  assertEquals(slow.status, 504);
  const body = await slow.json();
  assertEquals(body.type, "error");
  assertEquals(body.error.type, "timeout_error");
  assertOk(Date.now() - t0 < 5000);
  const gw = (await health(s.url)).model_gateway as Record<string, number>;
  assertEquals(gw.upstream_errors, 2);
  await silent.close();
});

Deno.test("the upstream's own errors reach the client unchanged (429 with retry-after)", async () => {
  const up = upstream(() =>
    Response.json({
      type: "error",
      error: { type: "rate_limit_error", message: "slow down" },
    }, { status: 429, headers: { "retry-after": "7" } })
  );
  await using s = await startServer({
    modelGateway: { upstreamAnthropic: up.url },
  });
  const res = await fetch(`${s.url}/v1/messages`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-api-key": KEY,
      "x-harness-capture": "rl",
    },
    body: JSON.stringify({
      model: "m",
      max_tokens: 5,
      messages: [{ role: "user", content: "hi" }],
    }),
  });
  assertEquals(res.status, 429);
  assertEquals(res.headers.get("retry-after"), "7");
  assertEquals((await res.json()).error.message, "slow down");
  const evs = await events(s, "rl");
  const responded = evs.find((e) => e.kind === "model.responded")!;
  assertEquals(responded.payload.status, 429);
  assertEquals(
    (responded.payload.error as { type: string }).type,
    "rate_limit_error",
  );
  await up.close();
});

Deno.test("a stream cut off mid-way ends the client's answer unfinished; the part is recorded as incomplete", async () => {
  const up = upstream(() => {
    const enc = new TextEncoder();
    let n = 0;
    return new Response(
      new ReadableStream({
        pull(ctrl) {
          if (n++ < 2) {
            ctrl.enqueue(enc.encode(
              `data: ${
                JSON.stringify({
                  id: "c",
                  object: "chat.completion.chunk",
                  model: "m",
                  choices: [{ index: 0, delta: { content: `part${n} ` } }],
                })
              }\n\n`,
            ));
          } else ctrl.error(new Error("cut"));
        },
      }),
      { headers: { "content-type": "text/event-stream" } },
    );
  });
  await using s = await startServer({
    modelGateway: { upstreamOpenai: `${up.url}/v1` },
  });
  const res = await fetch(`${s.url}/v1/chat/completions`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${KEY}`,
      "x-harness-capture": "cut",
    },
    body: JSON.stringify({
      model: "m",
      stream: true,
      messages: [{ role: "user", content: "hi" }],
    }),
  });
  assertEquals(res.status, 200);
  let failed = false;
  try {
    await res.text();
  } catch {
    failed = true;
  }
  assertOk(failed, "the client must see the stream cut, not a complete answer");
  const evs = await events(s, "cut");
  const responded = evs.find((e) => e.kind === "model.responded")!;
  assertEquals(responded.payload.incomplete, true);
  assertEquals(
    (responded.payload.response as { text: string }).text,
    "part1 part2 ",
  );
  await up.close();
});

Deno.test("a client that goes away mid-stream aborts the upstream request", async () => {
  let cancelled!: () => void;
  const upstreamCancelled = new Promise<void>((r) => cancelled = r);
  const up = upstream(() => {
    const enc = new TextEncoder();
    let timer: ReturnType<typeof setInterval> | undefined;
    return new Response(
      new ReadableStream({
        start(ctrl) {
          ctrl.enqueue(enc.encode(`data: {"choices":[]}\n\n`));
          timer = setInterval(() => {
            try {
              ctrl.enqueue(enc.encode(`: keep-alive\n\n`));
            } catch {
              clearInterval(timer);
            }
          }, 20);
        },
        cancel() {
          clearInterval(timer);
          cancelled();
        },
      }),
      { headers: { "content-type": "text/event-stream" } },
    );
  });
  await using s = await startServer({
    modelGateway: { upstreamOpenai: `${up.url}/v1` },
  });
  const ctrl = new AbortController();
  const res = await fetch(`${s.url}/v1/chat/completions`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${KEY}`,
    },
    body: JSON.stringify({ model: "m", stream: true, messages: [] }),
    signal: ctrl.signal,
  });
  const reader = res.body!.getReader();
  await reader.read();
  ctrl.abort();
  await reader.cancel().catch(() => {});
  const timeout = new Promise((_, no) =>
    setTimeout(() => no(new Error("the upstream was never aborted")), 5000)
  );
  await Promise.race([upstreamCancelled, timeout]);
  await up.close();
});

Deno.test("a finished capture: the answer is relayed unchanged, the miss counted, the capture untouched", async () => {
  const up = upstream(() => Response.json(chat("ok")));
  await using s = await startServer({
    modelGateway: { upstreamOpenai: `${up.url}/v1` },
  });
  const { CaptureCoordinator } = await import("../../lib/control/mod.ts");
  const coord = new CaptureCoordinator(s.store);
  coord.startCapture({ id: "done", activate: false });
  coord.finishCapture("done");
  const before = (await events(s, "done")).length;
  const res = await fetch(`${s.url}/v1/chat/completions`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${KEY}`,
      "x-harness-capture": "done",
    },
    body: JSON.stringify({
      model: "m",
      messages: [{ role: "user", content: "x" }],
    }),
  });
  assertEquals((await res.json()).choices[0].message.content, "ok");
  assertEquals((await events(s, "done")).length, before);
  const gw = (await health(s.url)).model_gateway as Record<string, unknown>;
  assertEquals(gw.record_misses, 1);
  assertMatch(String(gw.last_miss), /finished/);
  await up.close();
});

Deno.test("with an ingest token, the model routes take it in x-harness-token beside the client's key", async () => {
  const up = upstream((req) =>
    Response.json(chat(req.headers.get("authorization") ?? "none"))
  );
  await using s = await startServer({
    token: "tok-1",
    modelGateway: { upstreamOpenai: `${up.url}/v1` },
  });
  const body = JSON.stringify({ model: "m", messages: [] });
  const refused = await fetch(`${s.url}/v1/chat/completions`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${KEY}`,
    },
    body,
  });
  assertEquals(refused.status, 401);
  // In the API's own error shape, so the SDK shows the message.
  assertMatch((await refused.json()).error.message, /x-harness-token/);
  const ok = await fetch(`${s.url}/v1/chat/completions`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${KEY}`,
      "x-harness-token": "tok-1",
    },
    body,
  });
  // The key went to the upstream; our token did not.
  assertEquals((await ok.json()).choices[0].message.content, `Bearer ${KEY}`);
  assertEquals(up.seen.at(-1)!.headers.get("x-harness-token"), null);
  await up.close();
});

Deno.test("the client's key is nowhere in the store, the index or /health", async () => {
  const up = upstream(async (req) => {
    const body = await req.json();
    // An upstream error that echoes the key must not put it in the store.
    if (body.model === "echo") {
      return Response.json({
        error: { message: `Incorrect API key provided: ${KEY}` },
      }, { status: 401 });
    }
    return Response.json(chat("hello"));
  });
  await using s = await startServer({
    modelGateway: { upstreamOpenai: `${up.url}/v1` },
  });
  for (const model of ["m", "echo"]) {
    const r = await fetch(`${s.url}/v1/chat/completions?api-version=1`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${KEY}`,
        "x-harness-capture": "keys",
      },
      body: JSON.stringify({
        model,
        messages: [{ role: "user", content: "q" }],
      }),
    });
    await r.body?.cancel();
  }
  await s.server.modelGateway!.settled();
  s.store.flush();
  const hits: string[] = [];
  const walk = (dir: string) => {
    for (const e of Deno.readDirSync(dir)) {
      const p = `${dir}/${e.name}`;
      if (e.isDirectory) walk(p);
      else if (new TextDecoder().decode(Deno.readFileSync(p)).includes(KEY)) {
        hits.push(p);
      }
    }
  };
  walk(s.root);
  assertEquals(hits, []);
  assertOk(!JSON.stringify(await health(s.url)).includes(KEY));
  assertEquals(
    (await events(s, "keys")).filter((e) => e.kind === "model.requested")
      .length,
    2,
  );
  await up.close();
});
