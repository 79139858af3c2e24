/**
 * Shared setup for the error-map tests (`error_map_*_test.ts`): the body
 * shapes each route family answers in, the request bodies the cases send,
 * and a runner that sends cases to a real server on 127.0.0.1 and checks
 * each answer's status, headers and shape.
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { annotation } from "../../lib/trace/mod.ts";
import { CaptureCoordinator } from "../../lib/control/mod.ts";
import type { IngestServerOptions } from "../../lib/ingest/server.ts";
import { fixedContext } from "../_helpers.ts";
import { startServer } from "../_server.ts";

/** The body shapes, and what each must hold. */
export type Shape =
  | "control"
  | "hook-200"
  | "otlp"
  | "openai"
  | "anthropic";

/** One request and the answer the map gives it. */
export interface Case {
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

/** The content type every POST case sends unless it names its own. */
export const JSON_TYPE = { "content-type": "application/json" };
/** A well-formed host_b hook body. */
export const hookBody = JSON.stringify({
  session_id: "s-1",
  hook_event_name: "BeforeTool",
  timestamp: "2026-11-22T02:31:28.898Z",
  tool_name: "read_file",
  tool_input: { file_path: "notes.txt" },
});
/** A well-formed annotation event for capture `cap`, as a JSON body. */
export const event = (cap: string): string =>
  JSON.stringify(annotation(fixedContext(cap), { type: "note" }));
/** A well-formed OTLP trace export with one span. */
export const otlpBody = JSON.stringify({
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
/** A minimal OpenAI chat-completions request body. */
export const chatBody = JSON.stringify({ model: "m", messages: [] });
/** A minimal Anthropic messages request body. */
export const messagesBody = JSON.stringify({
  model: "m",
  max_tokens: 8,
  messages: [],
});

/** Read an answer and check its status, headers and body shape. */
export async function check(res: Response, c: Case): Promise<void> {
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

/**
 * Send each case to a fresh server (a finished capture "done" in its store)
 * and check each answer; then check that no refused request stored anything.
 */
export async function run(
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
