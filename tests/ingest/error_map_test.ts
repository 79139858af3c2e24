/**
 * The one error map (`lib/ingest/errors.ts`), pinned through the real
 * server on 127.0.0.1: each error kind on each route family answers one
 * status, its headers, and the family's body shape — the server's own
 * `{ok: false, error}`, the hooks' HTTP 200 for what a taken hook failed
 * at, OTLP's `Status` (`{code, message}`), a model API's own error.
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { annotation } from "../../lib/trace/mod.ts";
import { CaptureCoordinator } from "../../lib/control/mod.ts";
import type { IngestServerOptions } from "../../lib/ingest/server.ts";
import { fixedContext } from "../_helpers.ts";
import { startServer } from "../_server.ts";

/** The body shapes, and what each must hold. */
type Shape =
  | "control"
  | "hook-200"
  | "otlp"
  | "openai"
  | "anthropic";

/** One request and the answer the map gives it. */
interface Case {
  what: string;
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
  status: number;
  shape: Shape;
  /** OTLP's gRPC code, for the `otlp` shape. */
  code?: number;
  /** Headers the answer carries. */
  answerHeaders?: Record<string, string>;
  /** The message matches. */
  message?: RegExp;
}

const JSON_TYPE = { "content-type": "application/json" };
const hookBody = JSON.stringify({
  session_id: "s-1",
  hook_event_name: "BeforeTool",
  timestamp: "2026-11-22T02:31:28.898Z",
  tool_name: "read_file",
  tool_input: { file_path: "notes.txt" },
});
const event = (cap: string) =>
  JSON.stringify(annotation(fixedContext(cap), { type: "note" }));
const otlpBody = JSON.stringify({
  resourceSpans: [{
    resource: { attributes: [] },
    scopeSpans: [{
      scope: { name: "t" },
      spans: [{
        traceId: "0af7651916cd43dd8448eb211c80319c",
        spanId: "b7ad6b7169203331",
        name: "chat m",
        kind: 3,
        startTimeUnixNano: "1700000000000000000",
        endTimeUnixNano: "1700000001000000000",
        attributes: [],
      }],
    }],
  }],
});
const chatBody = JSON.stringify({ model: "m", messages: [] });
const messagesBody = JSON.stringify({
  model: "m",
  max_tokens: 8,
  messages: [],
});

/** Read an answer and check its shape; returns its message. */
async function check(res: Response, c: Case): Promise<void> {
  const label = `${c.what}: ${c.method ?? "POST"} ${c.path}`;
  assertEquals(res.status, c.status, label);
  for (const [k, v] of Object.entries(c.answerHeaders ?? {})) {
    assertEquals(res.headers.get(k), v, `${label}: header ${k}`);
  }
  const body = await res.json();
  let message: unknown;
  switch (c.shape) {
    case "control":
    case "hook-200":
      assertEquals(body.ok, false, label);
      message = body.error;
      break;
    case "otlp":
      assertEquals(body.code, c.code, label);
      assertEquals(body.error, body.message, label);
      message = body.message;
      break;
    case "openai":
      assertEquals(Object.keys(body), ["error"], label);
      assertEquals(typeof body.error.type, "string", label);
      message = body.error.message;
      break;
    case "anthropic":
      assertEquals(body.type, "error", label);
      assertEquals(typeof body.error.type, "string", label);
      message = body.error.message;
      break;
  }
  assertEquals(typeof message, "string", label);
  if (c.message) {
    assertOk(c.message.test(message as string), `${label}: ${message}`);
  }
}

async function run(
  cases: Case[],
  options: IngestServerOptions = {},
): Promise<void> {
  await using srv = await startServer({
    // Nothing here reaches an upstream: every case is refused before.
    modelGateway: { upstreamOpenai: "http://127.0.0.1:9/v1" },
    ...options,
  });
  const coord = new CaptureCoordinator(srv.store);
  coord.startCapture({ id: "done", activate: false });
  coord.finishCapture("done");
  const before = srv.store.getCapture("done")!.event_count;
  for (const c of cases) {
    const method = c.method ?? "POST";
    const res = await fetch(`${srv.url}${c.path}`, {
      method,
      headers: c.headers ?? (method === "POST" ? JSON_TYPE : {}),
      body: method === "POST" ? c.body ?? "{}" : undefined,
    });
    await check(res, c);
  }
  // No refused request stored anything.
  assertEquals(srv.store.getCapture("done")!.event_count, before);
}

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

Deno.test("errorAnswer(): unknown paths are 404, known paths with a wrong method 405 with Allow, in the family's shape", async () => {
  await run([
    {
      what: "no route",
      method: "GET",
      path: "/nope",
      status: 404,
      shape: "control",
      message: /No route \/nope/,
    },
    { what: "no host", path: "/hook/host_z", status: 404, shape: "control" },
    {
      what: "method",
      method: "GET",
      path: "/ingest",
      status: 405,
      shape: "control",
      answerHeaders: { allow: "POST" },
    },
    {
      what: "method",
      method: "GET",
      path: "/hook/host_b",
      status: 405,
      shape: "control",
      answerHeaders: { allow: "POST" },
    },
    {
      what: "method",
      method: "GET",
      path: "/v1/traces",
      status: 405,
      shape: "otlp",
      code: 12,
      answerHeaders: { allow: "POST" },
    },
    {
      what: "method",
      path: "/health",
      status: 405,
      shape: "control",
      answerHeaders: { allow: "GET" },
    },
    {
      what: "method",
      path: "/captures",
      status: 405,
      shape: "control",
      answerHeaders: { allow: "GET" },
    },
  ]);
});

Deno.test("errorAnswer(): a request from a web page is 403 on every family, in its shape", async () => {
  const origin = { ...JSON_TYPE, origin: "https://evil.example" };
  await run([
    {
      what: "origin",
      path: "/ingest",
      headers: origin,
      status: 403,
      shape: "control",
      message: /Origin/,
    },
    {
      what: "origin",
      path: "/hook/host_b",
      headers: origin,
      status: 403,
      shape: "control",
    },
    {
      what: "origin",
      path: "/v1/traces",
      headers: origin,
      status: 403,
      shape: "otlp",
      code: 7,
    },
    {
      what: "origin",
      method: "GET",
      path: "/health",
      headers: origin,
      status: 403,
      shape: "control",
    },
    {
      what: "origin",
      path: "/v1/chat/completions",
      headers: origin,
      body: chatBody,
      status: 403,
      shape: "openai",
    },
    {
      what: "origin",
      path: "/v1/messages",
      headers: origin,
      body: messagesBody,
      status: 403,
      shape: "anthropic",
    },
  ]);
});

Deno.test("errorAnswer(): a missing token is 401 with WWW-Authenticate on every family, in its shape", async () => {
  const challenge = { "www-authenticate": "Bearer" };
  await run([
    {
      what: "token",
      path: "/ingest",
      status: 401,
      shape: "control",
      answerHeaders: challenge,
      message: /Authorization: Bearer/,
    },
    {
      what: "token",
      path: "/hook/host_b",
      status: 401,
      shape: "control",
      answerHeaders: challenge,
    },
    {
      what: "token",
      path: "/v1/traces",
      status: 401,
      shape: "otlp",
      code: 16,
      answerHeaders: challenge,
    },
    {
      what: "token",
      method: "GET",
      path: "/captures",
      status: 401,
      shape: "control",
      answerHeaders: challenge,
    },
    {
      what: "token",
      method: "GET",
      path: "/nope",
      status: 401,
      shape: "control",
    },
    {
      what: "token",
      path: "/v1/chat/completions",
      body: chatBody,
      status: 401,
      shape: "openai",
      answerHeaders: challenge,
      message: /x-harness-token/,
    },
    {
      what: "token",
      path: "/v1/messages",
      headers: { ...JSON_TYPE, "anthropic-version": "2023-06-01" },
      body: messagesBody,
      status: 401,
      shape: "anthropic",
      message: /x-harness-token/,
    },
    {
      what: "token",
      method: "GET",
      path: "/v1/models",
      status: 401,
      shape: "openai",
    },
  ], { token: "tok-1" });
});

Deno.test("errorAnswer(): past maxInFlight every family answers 503 with Retry-After, in its shape", async () => {
  const retry = { "retry-after": "1" };
  await run([
    {
      what: "busy",
      path: "/ingest",
      body: event("c"),
      status: 503,
      shape: "control",
      answerHeaders: retry,
      message: /busy/,
    },
    {
      what: "busy",
      path: "/hook/host_b",
      body: hookBody,
      status: 503,
      shape: "control",
      answerHeaders: retry,
    },
    {
      what: "busy",
      path: "/v1/traces",
      body: otlpBody,
      status: 503,
      shape: "otlp",
      code: 14,
      answerHeaders: retry,
    },
    {
      what: "busy",
      method: "GET",
      path: "/health",
      status: 503,
      shape: "control",
      answerHeaders: retry,
    },
    {
      what: "busy",
      path: "/v1/chat/completions",
      body: chatBody,
      status: 503,
      shape: "openai",
      answerHeaders: retry,
    },
    {
      what: "busy",
      path: "/v1/messages",
      body: messagesBody,
      status: 503,
      shape: "anthropic",
      answerHeaders: retry,
    },
  ], { maxInFlight: 0 });
});

Deno.test("errorAnswer(): the model routes are registered from lib/model_gateway/ and stream past the handler time-out", async () => {
  const { createIngestHandler } = await import("../../lib/ingest/handler.ts");
  const { HarnessStore } = await import("../../lib/store/mod.ts");
  const { tempDir } = await import("../_helpers.ts");
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path);
  const { table } = createIngestHandler(store);
  const family = (method: string, target: string) =>
    table.find(method, target).route.family;
  assertEquals(family("POST", "/v1/chat/completions"), "model");
  assertEquals(family("GET", "/v1/chat/completions"), "model");
  assertEquals(family("GET", "/v1/models?x=1"), "model");
  assertEquals(family("DELETE", "/v1/files/f1"), "model");
  assertEquals(family("POST", "/p/shop/v1/messages"), "model");
  assertEquals(family("POST", "/v1/traces"), "otlp");
  assertEquals(table.longRunning("POST", "/v1/responses"), true);
  assertEquals(table.longRunning("POST", "/v1/traces"), false);
  assertEquals(table.longRunning("GET", "/nope"), false);
  const off = createIngestHandler(store, { modelGateway: false });
  assertEquals(off.table.routes.some((r) => r.family === "model"), false);
});
