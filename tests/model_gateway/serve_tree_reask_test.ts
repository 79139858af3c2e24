/**
 * A tree-form package served through the real ingest server (the dataflow
 * package of `../compiler/_dataflow.ts` at `/p/dataflow`), Claude Code's
 * request shapes (`../forms/_dataflow_requests.ts`): the gateway's own
 * calls are answered without the upstream, the model's Write at the leaf
 * is checked, and when the model's Write is refused and the upstream fails
 * while asked again, the host gets the gave-up words (200, streamed as it
 * asked), never an error it would not have got without the package.
 *
 * @module
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { startServer } from "../_server.ts";
import { TreeGatewayDriver } from "../../lib/forms/tree/gateway_driver.ts";
import { messageStream } from "./_claude_code.ts";
import { compileTraining } from "../compiler/_dataflow.ts";
import {
  AFTER_LEDGER,
  body,
  CWD,
  GREP,
  opening,
  V8,
} from "../forms/_dataflow_requests.ts";
import { expectedReport } from "../../tools/_dataflow_host.ts";

const pkg = (await compileTraining()).package;

/** An upstream that answers a Write (its content given) first, then `then`. */
function upstream(content: string, then: "500" | "write") {
  const bodies: unknown[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (req) => {
      bodies.push(await req.json());
      if (bodies.length > 1 && then === "500") {
        return Response.json({
          type: "error",
          error: { type: "api_error", message: "Internal server error" },
        }, { status: 500 });
      }
      const write = {
        type: "tool_use",
        id: `toolu_up${bodies.length}`,
        name: "Write",
        input: { file_path: `${CWD}/reports/${V8.order}.txt`, content },
      };
      return new Response(
        messageStream([write], { input_tokens: 100, output_tokens: 20 }),
        { headers: { "content-type": "text/event-stream" } },
      );
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    bodies,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

async function post(url: string, b: Record<string, unknown>) {
  const res = await fetch(`${url}/p/dataflow/v1/messages`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "anthropic-version": "2023-06-01",
      "x-api-key": "sk-ant-test",
    },
    body: JSON.stringify(b),
  });
  return { res, text: await res.text() };
}

Deno.test("a tree served through the server: the queue grep is the gateway's, no upstream request", async () => {
  await using up = upstream(expectedReport(V8), "write");
  await using srv = await startServer({
    modelGateway: {
      upstreamAnthropic: up.url,
      packages: { dataflow: new TreeGatewayDriver(pkg) },
    },
  });
  const { res, text } = await post(
    srv.url,
    body([opening()], { stream: true }),
  );
  assertEquals(res.status, 200);
  assertEquals(res.headers.get("x-harness-served"), "package");
  assertOk(text.includes('"name":"Bash"'), text);
  assertOk(text.includes(JSON.stringify(GREP.command).slice(1, -1)), text);
  assertEquals(up.bodies.length, 0);
});

Deno.test("a tree served through the server: the model's Write at the leaf reaches the host when it fits the template", async () => {
  await using up = upstream(expectedReport(V8), "500");
  await using srv = await startServer({
    modelGateway: {
      upstreamAnthropic: up.url,
      packages: { dataflow: new TreeGatewayDriver(pkg) },
    },
  });
  const { res, text } = await post(
    srv.url,
    body(AFTER_LEDGER, { stream: true }),
  );
  assertEquals(res.status, 200);
  assertEquals(res.headers.get("x-harness-refused"), null);
  assertOk(text.includes('"name":"Write"'), text);
  assertEquals(up.bodies.length, 1);
});

Deno.test("a tree served through the server: a refused Write whose re-ask meets a failing upstream gets the host the gave-up words, not the upstream's 500", async () => {
  const wrong = expectedReport(V8).replace(V8.balance, "999.00");
  for (const stream of [true, false]) {
    await using up = upstream(wrong, "500");
    await using srv = await startServer({
      modelGateway: {
        upstreamAnthropic: up.url,
        packages: { dataflow: new TreeGatewayDriver(pkg) },
      },
    });
    const { res, text } = await post(srv.url, body(AFTER_LEDGER, { stream }));
    assertEquals(res.status, 200, text);
    assertEquals(res.headers.get("x-harness-served"), "package");
    assertEquals(res.headers.get("x-harness-refused"), "1");
    assertOk(/I cannot do that: content must read/.test(text), text);
    assertEquals(
      (res.headers.get("content-type") ?? "").includes("text/event-stream"),
      stream,
    );
    // Asked once, then again with the refusal: the 500 stays with us.
    assertEquals(up.bodies.length, 2);
    const health =
      (await (await fetch(`${srv.url}/health`)).json()).model_gateway;
    assertEquals([health.refusals, health.gave_up], [1, 1]);
  }
});
