/**
 * The Gemini CLI 0.61 session of `fixtures/hosts/host_b/gateway/` (recorded
 * through `install gemini-cli --gateway`) played again through the real
 * server: its hook payloads to `/hook/host_b` and its model requests to the
 * model routes, in the order they happened, the model's recorded answers
 * served by a replay upstream (`serve --upstream-gemini`). Every model
 * request the model received is in the capture once, in the hooks' episode
 * (the router's classifier call too, which no hook sees), with one
 * `model.requested`/`model.responded` pair each (the hooks installed with
 * `--gateway` record no model side), the episode's tokens those of the
 * answers' `usageMetadata`; the client gets each answer byte for byte.
 *
 * @module
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { startServer } from "../_server.ts";
import { recordedEvents } from "../model_gateway/_gateway.ts";

const DIR = new URL("../../fixtures/hosts/host_b/gateway/", import.meta.url);
const CAPTURE = "gm_gateway";

interface Exchange {
  request: {
    method: string;
    path: string;
    query: string;
    headers: Record<string, string>;
    body: unknown;
  };
  answer: { content_type: string; body: string };
}

type Item = { hook?: unknown; ex?: Exchange };

function items(): Item[] {
  return [...Deno.readDirSync(DIR)].map((e) => e.name)
    .filter((n) => /^\d{3}-/.test(n)).sort()
    .map((n) => {
      const v = JSON.parse(Deno.readTextFileSync(new URL(n, DIR)));
      return n.includes("-model.exchange")
        ? { ex: v as Exchange }
        : { hook: v };
    });
}

/** Headers a client sends again (not the transport's). */
function sendable(h: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) {
    if (!["content-length", "connection", "accept-encoding"].includes(k)) {
      out[k] = v;
    }
  }
  return out;
}

Deno.test("Gemini CLI through the gateway, played again: every model request once, in the hooks' episode, tokens = usageMetadata, answers byte for byte", async () => {
  const all = items();
  const exchanges = all.flatMap((i) => i.ex ? [i.ex] : []);
  let served = 0;
  const upstream = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      const ex = exchanges[served++];
      const u = new URL(req.url);
      equal(
        `${u.pathname}${u.search}`,
        `${ex.request.path}${ex.request.query}`,
      );
      await req.body?.cancel();
      return new Response(ex.answer.body, {
        headers: { "content-type": ex.answer.content_type },
      });
    },
  );
  const up = `http://127.0.0.1:${(upstream.addr as Deno.NetAddr).port}`;
  await using server = await startServer({
    modelGateway: { upstreams: { gemini: up } },
  });
  try {
    const got: string[] = [];
    for (const it of all) {
      if (it.hook) {
        const res = await fetch(`${server.url}/hook/host_b?cap=${CAPTURE}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(it.hook),
        });
        equal((await res.json()).ok, true);
        continue;
      }
      const ex = it.ex!;
      const res = await fetch(
        `${server.url}${ex.request.path}${ex.request.query}`,
        {
          method: ex.request.method,
          // What the gateway took off before the model saw it: the key,
          // and the capture GEMINI_CLI_CUSTOM_HEADERS carried (install
          // --capture gm_gateway wrote it into .gemini/.env).
          headers: {
            ...sendable(ex.request.headers),
            "x-goog-api-key": "AIza-dummy-key-for-the-scripted-model",
            "x-harness-capture": CAPTURE,
          },
          body: JSON.stringify(ex.request.body),
        },
      );
      equal(res.status, 200);
      got.push(await res.text());
    }
    deepEqual(got, exchanges.map((e) => e.answer.body), "byte for byte");
    equal(served, exchanges.length);
    const evs = await recordedEvents(server, CAPTURE);
    const session = (all.find((i) =>
      (i.hook as { hook_event_name?: string })?.hook_event_name ===
        "SessionStart"
    )!.hook as { session_id: string }).session_id;
    deepEqual(
      [
        ...new Set(evs.map((e) =>
          e.episode_id
        )),
      ],
      [session],
      "one episode, the hooks'",
    );
    const requested = evs.filter((e) => e.kind === "model.requested");
    const responded = evs.filter((e) => e.kind === "model.responded");
    equal(requested.length, exchanges.length, "each model request once");
    equal(responded.length, exchanges.length);
    ok(
      requested.every((e) => e.source.host === "model_gateway"),
      "the gateway's pair only",
    );
    deepEqual(
      requested.map((e) =>
        (e.payload as { request: { model: string } }).request.model
      ),
      exchanges.map((x) => /models\/([^:]+):/.exec(x.request.path)![1]),
      "the classifier call is among them",
    );
    const recording = JSON.parse(
      Deno.readTextFileSync(new URL("_recording.json", DIR)),
    ) as { model_requests: { usage: Record<string, number> }[] };
    const usage = responded.map((e) =>
      (e.payload as { response: { usage: Record<string, number> } }).response
        .usage
    );
    deepEqual(
      usage.map((u) => [u.input_tokens, u.output_tokens, u.total_tokens]),
      recording.model_requests.map(({ usage: m }) => [
        m.promptTokenCount,
        (m.candidatesTokenCount ?? 0) + (m.thoughtsTokenCount ?? 0),
        m.totalTokenCount,
      ]),
      "tokens = usageMetadata (the last chunk's)",
    );
    // The calls are the hooks' (BeforeTool/AfterTool), once each.
    equal(evs.filter((e) => e.kind === "tool.call.started").length, 2);
    ok(
      evs.filter((e) => e.kind === "tool.call.started").every((e) =>
        e.source.host === "host_b"
      ),
    );
  } finally {
    await upstream.shutdown();
  }
});
