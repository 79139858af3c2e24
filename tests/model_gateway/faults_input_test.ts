/**
 * The model gateway under input it cannot use or record: bad bodies and
 * unknown routes reach the upstream untouched, nothing of ours answers 500;
 * a request for a finished capture is relayed unchanged and counted as a
 * miss, never lost from what was stored.
 */
import { assertEquals, assertMatch } from "../_assert.ts";
import { startServer } from "../_server.ts";
import { chat, events, health, KEY, upstream } from "./_faults.ts";

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
