/**
 * The model gateway and credentials: the ingest token travels in
 * `x-harness-token` beside the client's key, and the client's key reaches
 * the upstream and nothing else — not the store, the index or `/health`.
 */
import { assertEquals, assertMatch, assertOk } from "../_assert.ts";
import { startServer } from "../_server.ts";
import { chat, events, health, KEY, upstream } from "./_faults.ts";

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
