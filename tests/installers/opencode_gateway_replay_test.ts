/**
 * A real OpenCode 1.18.33 session recorded through `install opencode
 * --gateway` (`fixtures/hosts/host_c/gateway`, RECORDING.md), played back
 * through the real plugin and the real server: each plugin call as
 * OpenCode made it (the plugin built for this server), each model request
 * as OpenCode sent it, with the headers the plugin's `chat.headers` gave
 * it, to the gateway, whose upstream answers as the scripted model did. One
 * episode, nothing twice, failures as failures, the title call a side call
 * inside the episode, the host's tokens (issue #42: two or three episodes,
 * 39,284/146 tokens where the host counted 38,627/140).
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { join } from "node:path";
import { HOSTS_DIR, tempDir } from "../_helpers.ts";
import { startServer } from "../_server.ts";
import { hostCPluginSource } from "../../lib/installers/host_c_plugin.ts";
import { assertOneEpisode } from "./_opencode_gateway.ts";

const DIR = `${HOSTS_DIR}/host_c/gateway`;
/** The recording server's URL as the fixture writes it. */
const RECORDED_SERVER = "http://127.0.0.1:8848";
const CAPTURE = "oc_gateway";

type PluginCall = { hook: string; input: unknown; output: unknown };
type Exchange = {
  hook: "model.exchange";
  path: string;
  headers: Record<string, string>;
  body: string;
  status: number;
  sse: string;
};

/** The recording, each file's text with this server's URL in it. */
function recording(url: string): (PluginCall | Exchange)[] {
  return [...Deno.readDirSync(DIR)]
    .map((e) => e.name)
    .filter((n) => /^\d{3}-.*\.json$/.test(n))
    .sort()
    .map((n) =>
      JSON.parse(
        Deno.readTextFileSync(join(DIR, n)).replaceAll(RECORDED_SERVER, url),
      )
    );
}

/** What the host reported: its session and the sum of its steps' tokens. */
function hostSide(): {
  session: string;
  tokens: { input: number; output: number; steps: number };
} {
  const lines = Deno.readTextFileSync(join(DIR, "_run.jsonl")).trim()
    .split("\n").map((l) => JSON.parse(l));
  const tokens = { input: 0, output: 0, steps: 0 };
  for (const l of lines) {
    if (l.type !== "step_finish") continue;
    tokens.input += l.part.tokens.input;
    tokens.output += l.part.tokens.output;
    tokens.steps++;
  }
  return { session: lines[0].sessionID, tokens };
}

/** An upstream answering the recorded exchanges in order, keeping what it got. */
function recordedUpstream(exchanges: Exchange[]) {
  const got: { body: string; headers: Headers }[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      const body = await req.text();
      got.push({ body, headers: req.headers });
      const x = exchanges[got.length - 1];
      if (!x || x.body !== body) {
        return Response.json(
          { error: { message: "not the recorded request" } },
          {
            status: 400,
          },
        );
      }
      return new Response(x.sse, {
        status: x.status,
        headers: { "content-type": "text/event-stream; charset=utf-8" },
      });
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}/v1`,
    got,
    async [Symbol.asyncDispose]() {
      await server.shutdown();
    },
  };
}

/** Request headers as OpenCode sent them: the recorded ones, its key, ours. */
function requestHeaders(
  x: Exchange,
  ours: Record<string, string>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(x.headers)) {
    if (!["host", "content-length", "connection"].includes(k)) out[k] = v;
  }
  return { ...out, authorization: "Bearer sk-dummy-key", ...ours };
}

Deno.test("a recorded OpenCode session with the plugin and the gateway: one episode, nothing twice, failures as failures, the title a side call, the host's tokens", async () => {
  await using dir = await tempDir();
  const exchanges: Exchange[] = [];
  await using up = recordedUpstream(exchanges);
  await using srv = await startServer({
    modelGateway: { upstreamOpenai: up.url },
  });
  const items = recording(srv.url);
  exchanges.push(
    ...items.filter((i): i is Exchange => i.hook === "model.exchange"),
  );
  assertEquals(exchanges.length, 6);
  const file = join(dir.path, "harness.js");
  Deno.writeTextFileSync(
    file,
    hostCPluginSource({ url: srv.url, capture: CAPTURE }),
  );
  const hooks = await (await import(`file://${file}`)).HarnessPlugin({});
  // The headers chat.headers gave, per agent (the title call is its own).
  const headers: { agent: string; headers: Record<string, string> }[] = [];
  for (const item of items) {
    if (item.hook === "model.exchange") {
      const x = item as Exchange;
      const body = JSON.parse(x.body);
      const title = !Array.isArray(body.tools) || body.tools.length === 0;
      const at = headers.findIndex((h) => (h.agent === "title") === title);
      assertOk(at >= 0, "chat.headers came before its request");
      const [{ headers: ours }] = headers.splice(at, 1);
      const res = await fetch(`${srv.url}${x.path}`, {
        method: "POST",
        headers: requestHeaders(x, ours),
        body: x.body,
      });
      const text = await res.text();
      assertEquals(res.status, 200, text);
      continue;
    }
    const call = item as PluginCall;
    const fn = hooks[call.hook];
    if (typeof fn !== "function") continue;
    if (call.hook === "dispose") await fn();
    else if (call.hook === "config" || call.hook === "event") {
      await fn(call.input);
    } else if (call.hook === "chat.headers") {
      // The recording plugin ran after ours: take our headers out again.
      const recorded = (call.output as { headers: Record<string, string> })
        .headers;
      const output = {
        headers: Object.fromEntries(
          Object.entries(recorded).filter(([k]) => !k.startsWith("x-harness-")),
        ),
      };
      await fn(call.input, output);
      headers.push({
        agent: (call.input as { agent: string }).agent,
        headers: output.headers,
      });
    } else await fn(call.input, call.output);
  }
  assertEquals(headers, [], "every chat.headers had its request");
  await srv.server.modelGateway!.settled();
  // Our headers never reach the upstream; the request is OpenCode's own.
  assertEquals(up.got.length, 6);
  for (const g of up.got) {
    assertEquals(
      [...g.headers.keys()].filter((k) => k.startsWith("x-harness-")),
      [],
    );
  }
  const host = hostSide();
  const evs = await assertOneEpisode(srv.store, CAPTURE, {
    ...host,
    requests: exchanges.length,
  });
  // The provider's key the plugin saw is stored nowhere.
  assertEquals(JSON.stringify(evs).includes("sk-dummy-key"), false);
});
