/**
 * One episode per conversation for agents that send nothing of ours (no
 * `x-harness-*` header: the capture is the active one), through the real
 * server with the official clients, on both wires, whole and streamed: the
 * greeting opener (τ²-bench's agent speaks first), runs that send the same
 * first request one after the other and at once, two users who open with
 * "Hi", an edited and a regenerated turn (a new episode, linked), a retry
 * after an upstream error, after a client time-out and after a cut stream
 * (the same episode). Every answer names its episode in `x-harness-episode`,
 * and that is the episode it was recorded under; no call is recorded
 * twice; a refund's amount has its lineage in its own conversation.
 */
import { assertEquals, assertOk } from "../_assert.ts";
import type { TraceEvent } from "../../lib/trace/mod.ts";
import { loadEpisodes } from "../../lib/lineage/episodes.ts";
import { normalizeEpisode } from "../../lib/lineage/normalize.ts";
import { type GatewayRig, ofKind, startGateway } from "./_gateway.ts";
import {
  type Agent,
  type AgentWire,
  COMBOS,
  orders,
  refundModel,
  startAgent,
} from "./_agents.ts";

const SYSTEM = "You are a retail customer service agent. Use the tools.";
const GREETING = "Hi! How can I help you today?";

function agentOn(
  rig: GatewayRig,
  c: { wire: AgentWire; stream: boolean },
  more: { greeting?: string; timeout?: number; maxRetries?: number } = {},
): Agent {
  return startAgent({ bases: rig.bases, system: SYSTEM, ...c, ...more });
}

/** The events of each episode. */
function byEpisode(events: TraceEvent[]): Map<string, TraceEvent[]> {
  const out = new Map<string, TraceEvent[]>();
  for (const e of events) {
    if (e.episode_id === "_capture") continue;
    const list = out.get(e.episode_id);
    if (list) list.push(e);
    else out.set(e.episode_id, [e]);
  }
  return out;
}

const userTexts = (evs: TraceEvent[]) =>
  ofKind(evs, "message").filter((e) => e.payload.role === "user").map((e) =>
    e.payload.text
  );

/**
 * Each agent's answers all name one episode, no two agents the same; the
 * recorded episodes are exactly those, each holding its agent's requests
 * and user messages; no call recorded twice, each result parented to a
 * call of its own episode.
 */
function assertOneEpisodeEach(
  events: TraceEvent[],
  agents: { agent: Agent; users: string[]; requests?: number }[],
  where: string,
): Map<string, TraceEvent[]> {
  const episodes = byEpisode(events);
  assertEquals(episodes.size, agents.length, `${where}: episodes recorded`);
  const named = agents.map(({ agent }) => {
    const ids = new Set(agent.episodes);
    assertEquals(
      ids.size,
      1,
      `${where}: one agent, answers naming ${[...ids]}`,
    );
    const [id] = ids;
    assertOk(id !== null, `${where}: an answer without x-harness-episode`);
    return id!;
  });
  assertEquals(new Set(named).size, agents.length, `${where}: agents share`);
  assertEquals(
    [...episodes.keys()].sort(),
    [...named].sort(),
    `${where}: recorded episodes`,
  );
  for (const [i, { agent, users, requests }] of agents.entries()) {
    const evs = episodes.get(named[i])!;
    assertEquals(userTexts(evs), users, `${where}: agent ${i}'s words`);
    assertEquals(
      ofKind(evs, "model.requested").length,
      requests ?? agent.episodes.length,
      `${where}: agent ${i}'s requests`,
    );
    assertEquals(ofKind(evs, "episode.started").length, 1);
  }
  const started = ofKind(events, "tool.call.started");
  const ids = started.map((e) => e.payload.host_call_id);
  assertEquals(new Set(ids).size, ids.length, `${where}: a call twice`);
  const startOf = new Map(started.map((e) => [e.event_id, e]));
  for (
    const done of ofKind(events, "tool.call.completed", "tool.call.failed")
  ) {
    const s = startOf.get(done.parent_event_id ?? "");
    assertOk(s, `${where}: a result without its call`);
    assertEquals(s!.episode_id, done.episode_id, `${where}: lineage crossed`);
  }
  return episodes;
}

for (const c of COMBOS) {
  Deno.test(`${c.label}: 30 conversations that open with the agent's greeting are 30 episodes`, async () => {
    await using rig = await startGateway({
      unmodified: true,
      respond: refundModel,
    });
    const agents = Array.from({ length: 30 }, (_, i) => ({
      agent: agentOn(rig, c, { greeting: GREETING }),
      users: [`I am customer ${i}, hello.`, "Thanks, bye."],
    }));
    await Promise.all(agents.map(async ({ agent, users }) => {
      for (const u of users) await agent.turn(u);
    }));
    const events = await rig.events();
    const episodes = assertOneEpisodeEach(events, agents, c.label);
    for (const evs of episodes.values()) {
      // The greeting is the conversation's own history, once.
      assertEquals(
        ofKind(evs, "message").filter((e) => e.payload.text === GREETING)
          .map((e) => e.payload.history),
        [true],
      );
    }
  });
}

/** The refund of order 7 at `amount`, as one run of one task. */
async function refundRun(agent: Agent, amount: number): Promise<void> {
  const said = await agent.turn("Please refund order 7.", orders(amount));
  assertEquals(said, `Refunded ${amount}.`);
  await agent.turn("Thanks.");
}

/** Each episode's refund takes its amount from its own `get_order` result. */
function assertRefundLineage(
  episodes: { episode_id: string; events: TraceEvent[] }[],
  where: string,
): void {
  for (const ep of episodes) {
    const norm = normalizeEpisode({
      capture_id: "c",
      episode_id: ep.episode_id,
      events: ep.events,
      source_digest: "",
    });
    const refund = norm.steps.find((s) => s.host_tool === "refund");
    const lookup = norm.steps.find((s) => s.host_tool === "get_order");
    assertOk(refund && lookup, `${where}: ${ep.episode_id} has both calls`);
    const source = refund!.arg_lineage.amount;
    assertOk(
      typeof source === "string" && source.includes(`${lookup!.index}`),
      `${where}: the amount's source is ${source}, not its own lookup (step ${
        lookup!.index
      })`,
    );
  }
}

for (const c of COMBOS) {
  Deno.test(`${c.label}: two runs of one task, one after the other, are two episodes; the second links to the first`, async () => {
    await using rig = await startGateway({
      unmodified: true,
      respond: refundModel,
    });
    const runs = [184.37, 291.55].map((amount) => ({
      amount,
      agent: agentOn(rig, c),
      users: ["Please refund order 7.", "Thanks."],
    }));
    for (const r of runs) await refundRun(r.agent, r.amount);
    const events = await rig.events();
    const episodes = assertOneEpisodeEach(events, runs, c.label);
    const [first, second] = runs.map((r) => r.agent.episodes[0]!);
    const started = ofKind(episodes.get(second)!, "episode.started")[0];
    const link = started.payload.forked_from as Record<string, unknown>;
    assertEquals(link.episode_id, first);
    assertEquals(typeof link.request_event_id, "string");
    // Shared: the system prompt (OpenAI) and the user's first words.
    assertEquals(link.messages, c.wire === "openai" ? 2 : 1);
    const loaded = await loadEpisodes(rig.server.store, rig.capture);
    assertRefundLineage(loaded, c.label);
    // Each refund is its own run's amount.
    for (const r of runs) {
      const evs = episodes.get(r.agent.episodes[0]!)!;
      const refund = ofKind(evs, "tool.call.started").find((e) =>
        (e.payload.tool as { host_name: string }).host_name === "refund"
      )!;
      assertEquals(refund.payload.arguments, {
        order_id: "7",
        amount: r.amount,
      });
    }
  });

  Deno.test(`${c.label}: four runs of one task at once are four episodes, each with its own calls`, async () => {
    await using rig = await startGateway({
      unmodified: true,
      respond: refundModel,
    });
    const runs = [184.37, 291.55, 377.03, 412.98].map((amount) => ({
      amount,
      agent: agentOn(rig, c),
      users: ["Please refund order 7.", "Thanks."],
    }));
    await Promise.all(runs.map((r) => refundRun(r.agent, r.amount)));
    const events = await rig.events();
    const episodes = assertOneEpisodeEach(events, runs, c.label);
    for (const r of runs) {
      const evs = episodes.get(r.agent.episodes[0]!)!;
      const refund = ofKind(evs, "tool.call.started").find((e) =>
        (e.payload.tool as { host_name: string }).host_name === "refund"
      )!;
      assertEquals(refund.payload.arguments, {
        order_id: "7",
        amount: r.amount,
      });
    }
    assertRefundLineage(
      await loadEpisodes(rig.server.store, rig.capture),
      c.label,
    );
  });

  Deno.test(`${c.label}: two users who open with "Hi" (the same answer to both) are two episodes, one after the other and at once`, async () => {
    await using rig = await startGateway({
      unmodified: true,
      respond: refundModel,
    });
    const pair = () =>
      ["I want to return a lamp.", "Where is my parcel?"].map((then) => ({
        agent: agentOn(rig, c),
        users: ["Hi", then],
      }));
    const oneByOne = pair();
    for (const r of oneByOne) for (const u of r.users) await r.agent.turn(u);
    const atOnce = pair();
    await Promise.all(atOnce.map(async (r) => {
      for (const u of r.users) await r.agent.turn(u);
    }));
    const events = await rig.events();
    const episodes = assertOneEpisodeEach(
      events,
      [...oneByOne, ...atOnce],
      c.label,
    );
    const second = episodes.get(oneByOne[1].agent.episodes[0]!)!;
    const link = ofKind(second, "episode.started")[0].payload.forked_from as {
      episode_id: string;
    };
    assertEquals(link.episode_id, oneByOne[0].agent.episodes[0]);
  });

  Deno.test(`${c.label}: a regenerated turn and an edited turn start new episodes linked to the conversation; it goes on in its own`, async () => {
    await using rig = await startGateway({
      unmodified: true,
      respond: refundModel,
    });
    const agent = agentOn(rig, c);
    await agent.turn("First question.");
    agent.user("Second question.");
    const beforeSecond = agent.copy();
    await agent.ask();
    // Regenerate: the same request again after it was answered.
    const regen = beforeSecond.copy();
    await regen.ask();
    // Edit: the second question asked differently.
    const edited = beforeSecond.copy();
    edited.messages.pop();
    edited.user("Second question, edited.");
    await edited.ask();
    await agent.turn("Third question.");
    const events = await rig.events();
    const episodes = byEpisode(events);
    const [main] = new Set(agent.episodes);
    assertEquals(new Set(agent.episodes).size, 1);
    assertEquals(ofKind(episodes.get(main!)!, "model.requested").length, 3);
    assertEquals(userTexts(episodes.get(main!)!), [
      "First question.",
      "Second question.",
      "Third question.",
    ]);
    const system = c.wire === "openai" ? 1 : 0;
    for (
      const [other, shared] of [
        [regen, system + 3],
        [edited, system + 2],
      ] as const
    ) {
      const id = other.episodes.at(-1)!;
      assertOk(id !== main, "a new episode");
      const evs = episodes.get(id)!;
      const link = ofKind(evs, "episode.started")[0].payload.forked_from as {
        episode_id: string;
        messages: number;
        request_event_id: string;
      };
      assertEquals([link.episode_id, link.messages], [main, shared]);
      assertEquals(
        ofKind(events, "model.requested").find((e) =>
          e.event_id === link.request_event_id
        )?.episode_id,
        main,
      );
      // Its own history is its own: recorded again in the new episode.
      assertEquals(userTexts(evs)[0], "First question.");
    }
    assertEquals(episodes.size, 3);
  });

  Deno.test(`${c.label}: a retry after an upstream error, a client time-out or a cut stream stays in the episode`, async () => {
    await using rig = await startGateway({
      unmodified: true,
      respond: refundModel,
    });
    // An upstream error: the SDK retries by itself.
    const a = agentOn(rig, c, { maxRetries: 2 });
    rig.up.push({ status: 500, error: "The upstream broke" });
    await a.turn("Hello there.");
    // A time-out: the upstream never answers the first attempt.
    const b = agentOn(rig, c, { maxRetries: 1, timeout: 1500 });
    rig.up.push({ hang: true });
    await b.turn("Hello again.");
    const agents = [
      { agent: a, users: ["Hello there."], requests: 2 },
      { agent: b, users: ["Hello again."], requests: 2 },
    ];
    if (c.stream) {
      // A cut stream: the client sees it fail and sends the request again.
      const d = agentOn(rig, c);
      rig.up.push({ text: "You said: a lot of words", cutAfterChunks: 3 });
      d.user("Cut me off.");
      const before = structuredClone(d.messages);
      await d.ask().catch(() => null);
      d.messages = before;
      await d.ask();
      agents.push({ agent: d, users: ["Cut me off."], requests: 2 });
    }
    const events = await rig.events();
    const episodes = assertOneEpisodeEach(events, agents, c.label);
    for (const { agent } of agents) {
      const req = ofKind(episodes.get(agent.episodes[0]!)!, "model.requested");
      assertEquals(
        req.map((e) => (e.payload.conversation as { retry?: boolean }).retry),
        [undefined, true],
      );
    }
  });
}
