/**
 * The one error map (`errorAnswer`, `lib/ingest/error_answer.ts`) on routing, pinned through the
 * real server on 127.0.0.1: unknown paths (404) and wrong methods (405 with
 * Allow) in each route family's shape, and the model routes' registration.
 */
import { assertEquals } from "../_assert.ts";
import { run } from "./_error_map.ts";

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
