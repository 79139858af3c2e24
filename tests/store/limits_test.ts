import { assertEquals, assertOk } from "../_assert.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { annotation } from "../../lib/trace/mod.ts";
import { fixedContext, messageEventJson, tempDir } from "../_helpers.ts";
import { startServer } from "../_server.ts";
import { waitFor } from "../_wait.ts";
import { createIngestHandler } from "../../lib/ingest/mod.ts";

Deno.test("ingest refuses bodies that are not UTF-8 with 400 instead of storing U+FFFD", async () => {
  await using srv = await startServer();
  const ev = JSON.stringify(
    annotation(fixedContext("u"), { type: "note", t: "ab" }),
  );
  const bytes = new TextEncoder().encode(ev);
  const i = ev.indexOf('"ab"') + 1;
  bytes[i] = 0xc3; // a lead byte with no continuation
  const res = await fetch(`${srv.url}/ingest`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: bytes,
  });
  const body = await res.json();
  assertEquals(res.status, 400);
  assertOk(/UTF-8/.test(body.error), body.error);
  assertEquals(srv.store.hasCapture("u"), false);
});

Deno.test("non-finite numbers and deep nesting are refused as bad input (422/400), never 500, and nothing is stored", async () => {
  await using srv = await startServer();
  const base = annotation(fixedContext("shape"), { type: "note" });
  const text = JSON.stringify(base);
  const send = async (body: string, path = "/ingest") => {
    const res = await fetch(`${srv.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    return { status: res.status, body: await res.json() };
  };
  const inf = await send(
    text.replace('"type":"note"', '"type":"note","x":1e400'),
  );
  assertEquals(inf.status, 422, JSON.stringify(inf.body));
  assertOk(/not finite/.test(inf.body.error));
  let deep = '"v"';
  for (let i = 0; i < 100; i++) deep = `{"a":${deep}}`;
  const d100 = await send(
    text.replace('"type":"note"', `"type":"note","x":${deep}`),
  );
  assertEquals(d100.status, 422);
  assertOk(/deeper than 64/.test(d100.body.error), d100.body.error);
  const huge = "[".repeat(20_000) + "]".repeat(20_000);
  const dh = await send(huge);
  assertOk(dh.status === 400 || dh.status === 422, String(dh.status));
  const hook = await send(
    JSON.stringify({
      session_id: "s",
      hook_event_name: "UserPromptSubmit",
      prompt: JSON.parse(deep),
    }),
    "/hook/host_a?cap=shape",
  );
  assertEquals([hook.status, hook.body.ok], [200, false]);
  assertEquals(srv.store.hasCapture("shape"), false);
});

Deno.test("many captures cannot exhaust file handles: the least recently used spools close and reopen on use, chains intact", async () => {
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path, { maxOpenSpools: 8 });
  const sinks = Array.from({ length: 40 }, (_, i) => store.sink(`cap_${i}`));
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < 40; i++) {
      sinks[i].emit(
        annotation(fixedContext(`cap_${i}`), { type: "note", round }),
      );
      assertOk(store.openSpools <= 8, String(store.openSpools));
    }
  }
  for (let i = 0; i < 40; i++) {
    const r = await store.verifyCapture(`cap_${i}`);
    assertEquals([r.ok, r.events], [true, 3]);
  }
});

Deno.test("the server takes events for more captures than it may hold files open (1,100 capture ids)", async () => {
  await using srv = await startServer();
  for (let i = 0; i < 1100; i++) {
    const res = await fetch(`${srv.url}/ingest`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(
        annotation(fixedContext(`many_${i}`), { type: "note" }),
      ),
    });
    assertEquals(res.status, 200);
    await res.body?.cancel();
  }
  assertOk(srv.store.openSpools <= 128);
  assertEquals((await srv.store.verifyCapture("many_0")).ok, true);
  assertEquals((await srv.store.verifyCapture("many_1099")).ok, true);
});

Deno.test("past its connection cap, with every connection in the middle of a request, the server answers 503 with Retry-After instead of piling up work", async () => {
  await using srv = await startServer({ maxConnections: 2 });
  // Two requests whose bodies never finish hold both connections.
  const held: Deno.Conn[] = [];
  const port = Number(new URL(srv.url).port);
  for (let i = 0; i < 2; i++) {
    const c = await Deno.connect({ hostname: "127.0.0.1", port });
    await c.write(new TextEncoder().encode(
      `POST /ingest HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{`,
    ));
    held.push(c);
  }
  const conns = () => srv.server.stats!.connections!;
  await waitFor(
    "both connections in a request",
    () => conns().in_request === 2,
  );
  const res = await fetch(`${srv.url}/health`);
  assertEquals(res.status, 503);
  assertEquals(res.headers.get("retry-after"), "1");
  await res.body?.cancel();
  for (const c of held) c.close();
  await waitFor("both connections gone", () => conns().open === 0);
  const after = await fetch(`${srv.url}/health`);
  assertEquals(after.status, 200);
  await after.body?.cancel();
});

Deno.test("past its in-flight limit the handler (fetch API) answers 503 with Retry-After; slots free again when requests end", async () => {
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path);
  const { handler } = createIngestHandler(store, { maxInFlight: 2 });
  // Two requests whose bodies are still arriving hold both slots.
  const ends: (() => void)[] = [];
  const pending = [0, 1].map((i) => {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(
          new TextEncoder().encode(
            messageEventJson(`evt_inflight_${i}`, "inflight"),
          ),
        );
        ends.push(() => controller.close());
      },
    });
    return handler(
      new Request("http://127.0.0.1:1/ingest", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      }),
    );
  });
  const busy = await waitFor("both slots taken", async () => {
    const r = await handler(new Request("http://127.0.0.1:1/health"));
    if (r.status === 503) return r;
    await r.body?.cancel();
    return null;
  });
  assertEquals(busy.status, 503);
  assertEquals(busy.headers.get("retry-after"), "1");
  await busy.body?.cancel();
  for (const end of ends) end();
  for (const res of await Promise.all(pending)) {
    assertEquals(res.status, 200);
    await res.body?.cancel();
  }
  const after = await handler(new Request("http://127.0.0.1:1/health"));
  assertEquals(after.status, 200);
  await after.body?.cancel();
});
