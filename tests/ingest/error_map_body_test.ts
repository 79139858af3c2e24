/**
 * The one error map (`errorAnswer`, `lib/ingest/error_answer.ts`) on request bodies, pinned
 * through the real server on 127.0.0.1: a body that is not JSON, one for a
 * finished capture, a bad capture id or event, one past the limit, one of
 * the wrong type — each answers one status in its route family's shape.
 */
import {
  check,
  event,
  hookBody,
  JSON_TYPE,
  otlpBody,
  run,
  type Shape,
} from "./_error_map.ts";

Deno.test("errorAnswer(): a body that is not JSON is 400 on /ingest and OTLP, HTTP 200 ok:false on a hook", async () => {
  await run([
    {
      what: "not JSON",
      path: "/ingest",
      body: "{nope",
      status: 400,
      shape: "control",
      message: /not JSON/,
    },
    {
      what: "not JSON",
      path: "/hook/host_b",
      body: "{nope",
      status: 200,
      shape: "hook-200",
      message: /not JSON/,
    },
    {
      what: "not OTLP",
      path: "/v1/traces",
      body: "{nope",
      status: 400,
      shape: "otlp",
      code: 3,
      message: /^Not an OTLP traces request/,
    },
  ]);
});

Deno.test("errorAnswer(): a finished capture is 409 on /ingest and OTLP, HTTP 200 ok:false on a hook", async () => {
  await run([
    {
      what: "finished",
      path: "/ingest",
      body: event("done"),
      status: 409,
      shape: "control",
      message: /Capture "done" is finished/,
    },
    {
      what: "finished",
      path: "/hook/host_b?cap=done",
      body: hookBody,
      status: 200,
      shape: "hook-200",
      message: /finished/,
    },
    {
      what: "finished",
      path: "/v1/traces",
      headers: { ...JSON_TYPE, "x-harness-capture": "done" },
      body: otlpBody,
      status: 409,
      shape: "otlp",
      code: 9,
      message: /Capture "done" is finished/,
    },
  ]);
});

Deno.test("errorAnswer(): a bad capture id or event is 422 on /ingest and OTLP, HTTP 200 ok:false on a hook", async () => {
  await run([
    {
      what: "bad event",
      path: "/ingest",
      body: JSON.stringify({ kind: "x" }),
      status: 422,
      shape: "control",
    },
    {
      what: "bad id",
      path: "/hook/host_b?cap=../x",
      body: hookBody,
      status: 200,
      shape: "hook-200",
      message: /capture/,
    },
    {
      what: "bad id",
      path: "/v1/traces",
      headers: { ...JSON_TYPE, "x-harness-capture": "../x" },
      body: otlpBody,
      status: 422,
      shape: "otlp",
      code: 3,
    },
    {
      what: "bad id",
      method: "GET",
      path: "/capture/..%2Fx/summary",
      status: 422,
      shape: "control",
    },
    {
      what: "unknown capture",
      method: "GET",
      path: "/capture/nope/summary",
      status: 404,
      shape: "control",
    },
  ]);
});

Deno.test("errorAnswer(): a body past the limit is 413 on every family, in the family's shape, whether the listener refuses it by its declared length or a route reads it", async () => {
  const big = JSON.stringify({ x: "y".repeat(5000) });
  const shapes: [string, Shape, number?][] = [
    ["/ingest", "control"],
    ["/hook/host_b", "control"],
    ["/v1/traces", "otlp", 8],
    ["/v1/chat/completions", "openai"],
    ["/v1/messages", "anthropic"],
  ];
  // Our listener reads the declared length and closes at once, before any
  // handler: it asks the route table for the request's family.
  await run(
    shapes.map(([path, shape, code]) => ({
      what: "too large (listener)",
      path,
      body: big,
      status: 413,
      shape,
      code,
      message: /2000/,
    })),
    { maxBodyBytes: 2000 },
  );
  // Read by a route (the fetch handler), the error is in the family's shape.
  const { createIngestHandler } = await import("../../lib/ingest/handler.ts");
  const { HarnessStore } = await import("../../lib/store/mod.ts");
  const { tempDir } = await import("../_helpers.ts");
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path);
  const { handler, gateway } = createIngestHandler(store, {
    maxBodyBytes: 2000,
  });
  await using server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    handler,
  );
  const url = `http://127.0.0.1:${server.addr.port}`;
  for (const [path, shape, code] of shapes) {
    const res = await fetch(`${url}${path}`, {
      method: "POST",
      headers: JSON_TYPE,
      body: big,
    });
    await check(res, {
      what: "too large (route)",
      path,
      status: 413,
      shape,
      code,
    });
  }
  await gateway?.settled();
});

Deno.test("errorAnswer(): a body of the wrong type is 415 on /ingest, hooks and OTLP", async () => {
  const text = { "content-type": "text/plain" };
  await run([
    {
      what: "text",
      path: "/ingest",
      headers: text,
      status: 415,
      shape: "control",
      message: /application\/json/,
    },
    {
      what: "text",
      path: "/hook/host_a",
      headers: text,
      status: 415,
      shape: "control",
    },
    {
      what: "text",
      path: "/v1/traces",
      headers: text,
      status: 415,
      shape: "otlp",
      code: 3,
      message: /x-protobuf/,
    },
    {
      what: "brotli",
      path: "/v1/traces",
      headers: { ...JSON_TYPE, "content-encoding": "br" },
      body: otlpBody,
      status: 415,
      shape: "otlp",
      code: 3,
      message: /Content-Encoding br/,
    },
  ]);
});
