/**
 * The model gateway under failing upstreams: down or silent upstreams get
 * the API's own error shape, the upstream's own errors pass unchanged, a
 * stream cut off mid-way is recorded as incomplete, and a client that goes
 * away aborts the upstream request.
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { startServer } from "../_server.ts";
import { events, health, KEY, upstream } from "./_faults.ts";
import { guarded } from "../_wait.ts";

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
  const slow = await fetch(`${s.url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": KEY },
    body: JSON.stringify({ model: "m", max_tokens: 5, messages: [] }),
  });
  assertEquals(slow.status, 504);
  const body = await slow.json();
  assertEquals(body.type, "error");
  // The gateway's own time-out (300 ms) answered: a 504 timeout_error,
  // not the client giving up.
  assertEquals(body.error.type, "timeout_error");
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
  await guarded("the upstream request to be aborted", upstreamCancelled);
  await up.close();
});
