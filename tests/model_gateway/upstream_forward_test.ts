import { assertEquals, assertOk } from "../_assert.ts";
import { waitFor } from "../_wait.ts";
import { Http1Client } from "../../lib/model_gateway/http1_client/client.ts";
import {
  abandonForward,
  forwardUpstream,
} from "../../lib/model_gateway/upstream_forward.ts";
import { UpstreamDeadline } from "../../lib/model_gateway/upstream_deadline.ts";
import { specOfWire } from "../../lib/model_gateway/wires/registry.ts";
import { freshStats } from "../../lib/model_gateway/options.ts";

/** The upstream's time limit: far above a loopback answer's head. */
const LIMIT_MS = 2_000;

Deno.test("abandonForward: a request sent upstream whose answer no one will read lets go of its answer, its connection and its deadline", async () => {
  const enc = new TextEncoder();
  let cancelled = false;
  let asked = 0;
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => {
      asked++;
      // One event, then silence: only a cancel ends this answer.
      return new Response(
        new ReadableStream<Uint8Array>({
          start(c) {
            c.enqueue(enc.encode("data: {}\n\n"));
          },
          cancel() {
            cancelled = true;
          },
        }),
        { headers: { "content-type": "text/event-stream" } },
      );
    },
  );
  const client = new Http1Client();
  try {
    const sent = forwardUpstream(
      {
        url: `http://127.0.0.1:${server.addr.port}/v1/chat/completions`,
        method: "POST",
        headers: new Headers({ "content-type": "application/json" }),
        body: enc.encode('{"stream":true}'),
        client: undefined,
      },
      {
        family: specOfWire("openai")!,
        timeoutMs: LIMIT_MS,
        stats: freshStats({}),
        client,
      },
    );
    abandonForward(sent, new Error("reading the request threw"));
    await waitFor("the upstream's answer cancelled", () => cancelled);
    const s = await sent;
    assertOk("res" in s, "the upstream answered");
    assertEquals(asked, 1);
    // A deadline of the same time started after it ran out; the abandoned
    // one, ended, never does.
    const later = new UpstreamDeadline(LIMIT_MS);
    await new Promise((r) => later.signal.addEventListener("abort", r));
    assertEquals(s.deadline.signal.aborted, false);
  } finally {
    client.close();
    await server.shutdown();
  }
});
