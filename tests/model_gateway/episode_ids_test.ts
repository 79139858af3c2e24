/**
 * The ids a client sends win over the conversation, in the documented
 * order (`x-harness-episode`, Claude Code's session id, the Responses API's
 * `previous_response_id` and `conversation`, then other gateways' session
 * ids); every answer names its episode, errors the gateway makes included;
 * and after a restart in the middle of concurrent runs of one task each
 * run goes on in its own episode, nothing recorded twice.
 */
import OpenAI from "openai";
import { assertEquals, assertMatch, assertOk } from "../_assert.ts";
import { tempDir } from "../_helpers.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import { IngestServer } from "../../lib/ingest/server.ts";
import { writeActiveCapture } from "../../lib/store/active_capture.ts";
import type { TraceEvent } from "../../lib/trace/mod.ts";
import { loadEpisodes } from "../../lib/lineage/episodes.ts";
import { normalizeEpisode } from "../../lib/lineage/normalize.ts";
import { startServer } from "../_server.ts";
import { KEY, ofKind, startGateway } from "./_gateway.ts";
import { startUpstreams } from "./_upstreams.ts";
import { COMBOS, orders, refundModel, startAgent } from "./_agents.ts";

type Body = Record<string, unknown>;

async function post(
  url: string,
  path: string,
  body: Body,
  headers: Record<string, string> = {},
): Promise<{ status: number; episode: string | null; json: Body }> {
  const res = await fetch(`${url}${path}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${KEY}`,
      "x-api-key": KEY,
      "anthropic-version": "2023-06-01",
      ...headers,
    },
    body: JSON.stringify(body),
  });
  return {
    status: res.status,
    episode: res.headers.get("x-harness-episode"),
    json: await res.json(),
  };
}

const chat = (text: string, more: Body = {}): Body => ({
  model: "m",
  messages: [{ role: "user", content: text }],
  ...more,
});

Deno.test("ids the client sends win, in order: x-harness-episode, Claude Code's session, previous_response_id and conversation, then other gateways' session ids", async () => {
  await using rig = await startGateway({
    unmodified: true,
    respond: refundModel,
  });
  const url = rig.server.url;
  const session = "c941b660-8ed3-42ec-ae63-e68d997c8f23";
  const claude: Body = {
    model: "claude",
    max_tokens: 64,
    messages: [{ role: "user", content: "Hello from Claude Code" }],
    metadata: { user_id: JSON.stringify({ session_id: session }) },
  };
  const cases: [string, Promise<{ episode: string | null }>, string][] = [];
  const is = (
    what: string,
    got: Promise<{ episode: string | null }>,
    want: string,
  ) => cases.push([what, got, want]);
  is(
    "x-harness-episode over the session",
    post(url, "/v1/messages", claude, { "x-harness-episode": "ep_named" }),
    "ep_named",
  );
  is("Claude Code's session", post(url, "/v1/messages", claude), session);
  is(
    "the session over Helicone's",
    post(url, "/v1/messages", claude, { "helicone-session-id": "h_1" }),
    session,
  );
  is(
    "Helicone-Session-Id",
    post(url, "/v1/chat/completions", chat("a"), {
      "Helicone-Session-Id": "helicone_7",
    }),
    "helicone_7",
  );
  is(
    "Helicone over x-session-id and LiteLLM",
    post(url, "/v1/chat/completions", chat("b", { litellm_session_id: "l" }), {
      "helicone-session-id": "helicone_8",
      "x-session-id": "x_1",
    }),
    "helicone_8",
  );
  is(
    "OpenRouter's x-session-id",
    post(url, "/v1/chat/completions", chat("c"), { "x-session-id": "or_1" }),
    "or_1",
  );
  is(
    "LiteLLM's litellm_session_id",
    post(
      url,
      "/v1/chat/completions",
      chat("d", { litellm_session_id: "ll_1" }),
    ),
    "ll_1",
  );
  is(
    "LiteLLM's, in metadata",
    post(
      url,
      "/v1/chat/completions",
      chat("e", { metadata: { litellm_session_id: "ll_2" } }),
    ),
    "ll_2",
  );
  is(
    "Langfuse's session_id in metadata",
    post(
      url,
      "/v1/chat/completions",
      chat("f", { metadata: { session_id: "lf_1" } }),
    ),
    "lf_1",
  );
  is(
    "OpenRouter's session_id",
    post(url, "/v1/chat/completions", chat("g", { session_id: "or_2" })),
    "or_2",
  );
  is(
    "the Responses API's conversation",
    post(url, "/v1/responses", {
      model: "m",
      input: "h",
      conversation: "conv_abc123",
    }),
    "conv_abc123",
  );
  for (const [what, got, want] of cases) {
    assertEquals((await got).episode, want, what);
  }
  // An id that is no valid episode id is hashed into one, the same each time.
  const odd = { "x-session-id": "user 42 / chat #9" };
  const a = await post(url, "/v1/chat/completions", chat("i"), odd);
  const b = await post(url, "/v1/chat/completions", chat("j"), odd);
  assertMatch(a.episode!, /^s_[0-9a-f]{40}$/);
  assertEquals(b.episode, a.episode);
  // previous_response_id: the episode of that response, over Helicone's.
  const r1 = await post(url, "/v1/responses", { model: "m", input: "k" });
  const r2 = await post(url, "/v1/responses", {
    model: "m",
    previous_response_id: r1.json.id,
    input: [{ role: "user", content: "l" }],
  }, { "helicone-session-id": "helicone_9" });
  assertEquals(r2.episode, r1.episode);
  assertMatch(r1.episode!, /^gw_/);
  // Every one recorded under the episode its answer named.
  const events = await rig.events();
  const requested = ofKind(events, "model.requested");
  const named = [
    ...(await Promise.all(cases.map(([, got]) => got))).map((g) => g.episode),
    a.episode,
    b.episode,
    r1.episode,
    r2.episode,
  ];
  assertEquals(requested.map((e) => e.episode_id), named);
});

Deno.test("an error the gateway makes names the episode too, and is recorded under it", async () => {
  const closed = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = closed.addr.port;
  closed.close();
  // The OpenAI upstream is a port nobody listens on.
  await using s = await startServer({
    modelGateway: { upstreamOpenai: `http://127.0.0.1:${port}/v1` },
  });
  writeActiveCapture(s.root, "cap_down");
  const got = await post(s.url, "/v1/chat/completions", chat("anyone?"));
  assertEquals(got.status, 502);
  assertMatch(got.episode!, /^gw_/);
  await s.server.modelGateway!.settled();
  const evs: TraceEvent[] = [];
  for await (const e of s.store.readEvents("cap_down")) evs.push(e);
  const responded = ofKind(evs, "model.responded");
  assertEquals(responded.map((e) => [e.episode_id, e.payload.status]), [
    [got.episode, 502],
  ]);
});

for (const c of COMBOS) {
  Deno.test(`${c.label}: a restart in the middle of four runs of one task at once: each goes on in its own episode, nothing twice`, async () => {
    await using dir = await tempDir();
    await using up = startUpstreams([], { respond: refundModel });
    const serve = async () => {
      const store = new HarnessStore(dir.path, { role: "ingest-server" });
      const server = new IngestServer(store, {
        port: 0,
        modelGateway: {
          upstreamOpenai: up.openaiBase,
          upstreamAnthropic: up.anthropicBase,
        },
      });
      const url = await server.start();
      return {
        store,
        server,
        bases: { openaiBase: `${url}/v1`, anthropicBase: url },
        async close() {
          await server.close();
          store.close();
        },
      };
    };
    let s = await serve();
    writeActiveCapture(dir.path, "cap_restart");
    const amounts = [184.37, 291.55, 377.03, 412.98];
    const runs = amounts.map((amount) => ({
      amount,
      agent: startAgent({ bases: s.bases, system: "Retail agent.", ...c }),
    }));
    // Each run: the user's request, the lookup answered, its result sent.
    await Promise.all(runs.map(async ({ agent, amount }) => {
      agent.user("Please refund order 7.");
      const a = await agent.ask();
      agent.results(a.calls.map((call) => ({
        id: call.id,
        content: orders(amount)(call),
      })));
    }));
    await s.close();
    s = await serve();
    await Promise.all(runs.map(async ({ agent, amount }) => {
      agent.rebase(s.bases);
      const a = await agent.ask(); // the refund, after the restart
      agent.results(a.calls.map((call) => ({
        id: call.id,
        content: orders(amount)(call),
      })));
      assertEquals((await agent.ask()).text, `Refunded ${amount}.`);
      await agent.turn("Thanks.");
    }));
    await s.server.modelGateway!.settled();
    const events: TraceEvent[] = [];
    for await (const e of s.store.readEvents("cap_restart")) events.push(e);
    const episodes = new Set(
      events.filter((e) => e.episode_id !== "_capture").map((e) =>
        e.episode_id
      ),
    );
    assertEquals(episodes.size, runs.length);
    for (const { agent, amount } of runs) {
      const ids = new Set(agent.episodes);
      assertEquals(ids.size, 1, `one episode across the restart: ${[...ids]}`);
      const [id] = ids;
      const evs = events.filter((e) => e.episode_id === id);
      assertEquals(ofKind(evs, "model.requested").length, 4);
      assertEquals(ofKind(evs, "episode.started").length, 1);
      const users = ofKind(evs, "message").filter((e) =>
        e.payload.role === "user"
      ).map((e) => e.payload.text);
      assertEquals(users, ["Please refund order 7.", "Thanks."]);
      const started = ofKind(evs, "tool.call.started");
      assertEquals(
        started.map((e) => [
          (e.payload.tool as { host_name: string }).host_name,
          e.payload.arguments,
        ]),
        [
          ["get_order", { order_id: "7" }],
          ["refund", { order_id: "7", amount }],
        ],
      );
      const done = ofKind(evs, "tool.call.completed");
      assertEquals(
        done.map((e) => e.parent_event_id),
        started.map((e) => e.event_id),
      );
    }
    for (const ep of await loadEpisodes(s.store, "cap_restart")) {
      const norm = normalizeEpisode(ep);
      const refund = norm.steps.find((x) => x.host_tool === "refund")!;
      const lookup = norm.steps.find((x) => x.host_tool === "get_order")!;
      assertOk(
        String(refund.arg_lineage.amount).includes(`${lookup.index}`),
        `lineage ${refund.arg_lineage.amount}`,
      );
    }
    await s.close();
  });
}

Deno.test("the official openai client reads the episode of each answer from x-harness-episode", async () => {
  await using rig = await startGateway({
    unmodified: true,
    respond: refundModel,
  });
  const client = new OpenAI({
    baseURL: rig.bases.openaiBase,
    apiKey: KEY,
    maxRetries: 0,
  });
  const { response } = await client.chat.completions.create({
    model: "m",
    messages: [{ role: "user", content: "Hello" }],
  }).withResponse();
  const episode = response.headers.get("x-harness-episode");
  const events = await rig.events();
  assertEquals(
    ofKind(events, "model.requested").map((e) => e.episode_id),
    [episode],
  );
});
