/**
 * The client's exact key is scrubbed from everything recorded of its
 * exchange, whatever its shape (issue 44, item 9): an upstream that echoes
 * it (a 401 quoting the key, an answer repeating it) and a user who pastes
 * it leave no trace of it in the store, for keys sent in `Authorization`,
 * `x-api-key`, `api-key` (Azure), `x-goog-api-key` and `?key=`.
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { startServer } from "../_server.ts";
import { upstream } from "./_faults.ts";

/** Keys of shapes no redaction rule names (a self-hosted token, a hex key …). */
const KEYS = {
  authorization: "selfhost-Wombat-31415926-tok",
  "x-api-key": "zz-anthro-proxy-key-27182818",
  "api-key": "0f1e2d3c4b5a69788796a5b4c3d2e1f0",
  "x-goog-api-key": "goog-style-Numbat-1618033988",
  query: "qkey-Bilby-14142135623",
};

function filesHolding(dir: string, needle: string): string[] {
  const out: string[] = [];
  for (const e of Deno.readDirSync(dir)) {
    const p = `${dir}/${e.name}`;
    if (e.isDirectory) out.push(...filesHolding(p, needle));
    else if (new TextDecoder().decode(Deno.readFileSync(p)).includes(needle)) {
      out.push(p);
    }
  }
  return out;
}

Deno.test("the client's key, of any shape, in any of its headers or ?key=, is in nothing recorded", async () => {
  // The upstream repeats every header and the query it got: in a 401's
  // message when asked to fail, else in its answer's text.
  const up = upstream(async (req) => {
    const body = await req.json();
    const said = [...req.headers].map(([k, v]) => `${k}=${v}`).join(" ") +
      ` ${new URL(req.url).search}`;
    if (body.model === "fail") {
      return Response.json({ error: { message: `Bad key: ${said}` } }, {
        status: 401,
      });
    }
    if (req.url.includes("/v1/messages")) {
      return Response.json({
        id: "msg_1",
        type: "message",
        role: "assistant",
        model: "m",
        content: [{ type: "text", text: `you said ${said}` }],
        stop_reason: "end_turn",
        usage: { input_tokens: 1, output_tokens: 1 },
      });
    }
    return Response.json({
      id: "c1",
      object: "chat.completion",
      model: "m",
      choices: [{
        index: 0,
        message: { role: "assistant", content: `you said ${said}` },
        finish_reason: "stop",
      }],
    });
  });
  await using s = await startServer({
    modelGateway: {
      upstreamOpenai: `${up.url}/v1`,
      upstreamAnthropic: up.url,
    },
  });
  const sends: {
    path: string;
    headers: Record<string, string>;
    key: string;
  }[] = [
    {
      path: "/v1/chat/completions",
      headers: { authorization: `Bearer ${KEYS.authorization}` },
      key: KEYS.authorization,
    },
    {
      path: "/v1/messages",
      headers: {
        "x-api-key": KEYS["x-api-key"],
        "anthropic-version": "2023-06-01",
      },
      key: KEYS["x-api-key"],
    },
    {
      path: "/v1/chat/completions?api-version=2024-10-21",
      headers: { "api-key": KEYS["api-key"] },
      key: KEYS["api-key"],
    },
    {
      path: "/v1/chat/completions",
      headers: { "x-goog-api-key": KEYS["x-goog-api-key"] },
      key: KEYS["x-goog-api-key"],
    },
    {
      path: `/v1/chat/completions?key=${KEYS.query}`,
      headers: {},
      key: KEYS.query,
    },
  ];
  for (const send of sends) {
    for (const model of ["m", "fail"]) {
      const res = await fetch(`${s.url}${send.path}`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-harness-capture": "cap_keys",
          ...send.headers,
        },
        body: JSON.stringify({
          model,
          max_tokens: 10,
          messages: [{
            role: "user",
            content: `here is my key: ${send.key} (keep it safe)`,
          }],
        }),
      });
      const text = await res.text();
      // The client sees what the upstream said, key and all.
      assertOk(text.includes(send.key), text);
    }
  }
  const g = s.server.modelGateway!;
  await g.settled();
  assertEquals([g.stats.recorded, g.stats.record_misses], [10, 0]);
  s.store.flush();
  for (const key of Object.values(KEYS)) {
    assertEquals(filesHolding(s.root, key), [], key);
  }
  const events = [];
  for await (const ev of s.store.readEvents("cap_keys")) events.push(ev);
  const all = JSON.stringify(events);
  assertOk(all.includes("[REDACTED:client_key]"));
  // The rest of what was said is kept.
  assertOk(all.includes("(keep it safe)"));
  await up.close();
});
