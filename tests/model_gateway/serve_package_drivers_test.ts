/**
 * One engine, three drivers: the same compiled τ² retail package, on the
 * held-out recorded conversations of the vendored slice, under (a) the
 * replay that verifies and evaluates (`replayAgent`), (b) `Conversation`
 * against the scripted model server (the closed loop's driver), and (c)
 * the model gateway serving the package inside an unmodified agent loop on
 * the official `openai` client (`runRetailAgent`), whose upstream is the
 * same scripted model server.
 *
 * What the drivers may do differently, by design, and how the comparison
 * allows for it (nothing else may differ):
 *
 * - (a) feeds a user message only before a recorded tool call, so the
 *   messages after the episode's last call never reach it; its lookups
 *   are compared with the live ones made before the first such message.
 *   It knows only the recorded results: a lookup the recording never made
 *   between the same writes has no result and feeds no further lookup
 *   (`extra_lookups`), so only such an episode may make fewer lookups
 *   under it. It names no arguments (`by_node` counts), so it is compared
 *   per tool; (b) and (c) are compared call for call.
 * - (b) answers a read the model repeats from the lookups it made
 *   (`by: "served"`, no tool call); in (c) the agent runs every call the
 *   model makes itself, so those reads reach the environment again.
 * - (b) hides a failed lookup from the model (it asks for the read, and
 *   is answered from the lookup); in (c) the agent ran it and holds its
 *   result, so the model (a replay of the recorded agent) does not ask.
 *   The environment's calls under (c) are those of (b) plus exactly the
 *   reads (b) answered from its successful lookups.
 *
 * @module
 */
import OpenAI from "openai";
import { assertEquals, assertOk } from "../_assert.ts";
import { startServer } from "../_server.ts";
import { canonicalJson } from "../../lib/trace/canonical_json.ts";
import { replayAgent } from "../../lib/forms/agent/agent_replay.ts";
import { Conversation } from "../../lib/forms/agent/conversation.ts";
import { AgentSession } from "../../lib/forms/agent/agent_session.ts";
import { GatewayDriver } from "../../lib/forms/agent/gateway_driver.ts";
import { openaiChatWire } from "../../lib/model_gateway/wires/openai_chat/read.ts";
import { ANSWER_HEADERS } from "../../lib/model_gateway/answer_headers.ts";
import { declareTool } from "../../lib/tool_gateway/parameters.ts";
import type { ToolRegistry } from "../../lib/runtime/runtime_types.ts";
import { openModel } from "../../lib/models/open_model.ts";
import { RETAIL_TOOL_SCHEMAS, RetailEnv } from "../../eval/envs/tau2/mod.ts";
import { scriptFromTau2 } from "../../eval/scripted_model.ts";
import { startScriptedModelServer } from "../../eval/scripted_model_server.ts";
import { RETAIL_CHAT_TOOLS, runRetailAgent } from "./_retail_agent.ts";
import { RETAIL_INSTRUCTIONS, servedRetail } from "./_served_retail.ts";

const USER_END = /###(STOP|TRANSFER|OUT-OF-SCOPE)###/;

interface Call {
  name: string;
  arguments: Record<string, unknown>;
}
const keyOf = (c: Call) => `${c.name} ${canonicalJson(c.arguments)}`;
const keys = (calls: Call[]) => calls.map(keyOf);
const sortedKeys = (calls: Call[]) => keys(calls).sort();

function perTool(calls: Call[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of calls) out[c.name] = (out[c.name] ?? 0) + 1;
  return out;
}

/** The environment's tools, each call logged. */
function loggedTools(env: RetailEnv, log: Call[]): ToolRegistry {
  return Object.fromEntries(
    Object.entries(env.tools).map(([name, fn]) => [
      name,
      declareTool((args: Record<string, unknown>) => {
        log.push({ name, arguments: structuredClone(args) });
        return fn(args);
      }, "object"),
    ]),
  );
}

/** A fetch that keeps the tool calls of every answer the package made. */
function servedTap(served: Call[]): typeof fetch {
  return async (input, init) => {
    const res = await fetch(input, init);
    if (res.headers.get(ANSWER_HEADERS.served) === "package") {
      const body = await res.clone().json();
      for (const c of body.choices[0].message.tool_calls ?? []) {
        served.push({
          name: c.function.name,
          arguments: JSON.parse(c.function.arguments),
        });
      }
    }
    return res;
  };
}

const compiled = new Map<number, ReturnType<typeof servedRetail>>();
/** The package of a seed, compiled once per file. */
function retailOf(seed: number): ReturnType<typeof servedRetail> {
  if (!compiled.has(seed)) compiled.set(seed, servedRetail(seed));
  return compiled.get(seed)!;
}

const schemas = RETAIL_TOOL_SCHEMAS.map((
  { name, description, parameters },
) => ({ name, description, parameters }));

for (const seed of [2, 1]) {
  Deno.test(`a package makes the same lookups and writes under replay, Conversation and the model gateway (τ² retail, held-out split of seed ${seed})`, async () => {
    const retail = retailOf(seed);
    const { pkg, effects, writes, db } = retail;
    await using scripted = startScriptedModelServer({ writes });
    const liveBase = scripted.addScript({
      ...scriptFromTau2(retail.simulations[0]),
      id: "live",
    });
    await using srv = await startServer({
      modelGateway: {
        upstreamOpenai: liveBase,
        upstreamAnthropic: liveBase,
        packages: { "": new GatewayDriver(pkg) },
      },
    });
    const index = new Map(retail.data.episodes.map((e, i) => [e.id, i]));
    const before = canonicalJson(new RetailEnv(db).db);
    let changed = 0;
    let refusedB = 0;
    let repeatsServed = 0;
    let replayed = 0;
    assertOk(retail.held.length >= 6, `${retail.held.length} held out`);
    for (const e of retail.held) {
      const script = scriptFromTau2(retail.simulations[index.get(e.id)!]);
      const end = script.users.findIndex((u) => USER_END.test(u));
      const users = end < 0 ? script.users : script.users.slice(0, end);

      // (a) the replay.
      const replay = replayAgent(pkg.ir, { episode: e.norm, effects });
      const byReplay: Record<string, number> = {};
      for (const [node, c] of Object.entries(replay.by_node)) {
        const tool = (pkg.ir.nodes[node] as unknown as { tool: string }).tool;
        byReplay[tool] = (byReplay[tool] ?? 0) + c.issued;
      }
      const last = e.norm.steps.at(-1)?.state_before.input as
        | { user?: string[] }
        | undefined;
      const replaySaw = last?.user?.length ?? 0;

      // (b) Conversation against the scripted model server.
      const envB = new RetailEnv(db);
      const logB: Call[] = [];
      const conv = new Conversation(pkg, {
        tools: loggedTools(envB, logB),
        schemas,
        instructions: RETAIL_INSTRUCTIONS,
      }, {
        model: openModel("openai/recorded-agent", {
          url: scripted.addScript(script),
          env: {},
        }),
      });
      let callsBeforeUnseen = -1;
      for (const [k, u] of users.entries()) {
        if (k === replaySaw) callsBeforeUnseen = conv.calls.length;
        const turn = await conv.user(u);
        assertEquals(turn.status, "replied", `${e.id}: ${turn.reason}`);
      }
      if (callsBeforeUnseen < 0) callsBeforeUnseen = conv.calls.length;
      const asCall = (c: { tool: string; args: unknown }): Call => ({
        name: c.tool,
        arguments: c.args as Record<string, unknown>,
      });
      const lookupsB = conv.calls.filter((c) => c.by === "lookup").map(asCall);
      const shown = new Set(
        keys(conv.calls.filter((c) => c.by === "lookup" && c.ok).map(asCall)),
      );
      const servedB = conv.calls.filter((c) => c.by === "served").map(asCall)
        .filter((c) => shown.has(keyOf(c)));
      refusedB += conv.stats.refused;
      repeatsServed += servedB.length;

      // (c) the gateway inside an agent loop, the same scripted model.
      scripted.addScript({ ...script, id: "live" });
      const lookupsC: Call[] = [];
      const run = await runRetailAgent({
        client: new OpenAI({
          baseURL: `${srv.url}/v1`,
          apiKey: "sk-served",
          maxRetries: 0,
          fetch: servedTap(lookupsC),
        }),
        db,
        users: script.users,
        instructions: RETAIL_INSTRUCTIONS,
        // As (b) has it: the user speaks first.
        greeting: null,
      });
      assertEquals(run.ended, "user_end", e.id);
      const envC: Call[] = run.calls.map((c) => ({
        name: c.name,
        arguments: c.arguments,
      }));

      // Lookups: (b) and (c) call for call; (a) per tool, up to what it read.
      assertEquals(sortedKeys(lookupsC), sortedKeys(lookupsB), e.id);
      const live = perTool(
        conv.calls.slice(0, callsBeforeUnseen)
          .filter((c) => c.by === "lookup").map(asCall),
      );
      if (canonicalJson(live) === canonicalJson(byReplay)) replayed++;
      else {
        assertOk(
          replay.extra_lookups > 0,
          `${e.id}: replay ${JSON.stringify(byReplay)}, live ${
            JSON.stringify(live)
          }, every result known to the replay`,
        );
      }
      // The environment: the same writes in the same order; the same calls
      // but for the reads (b) answered from its lookups.
      assertEquals(
        keys(envC.filter((c) => writes.has(c.name))),
        keys(logB.filter((c) => writes.has(c.name))),
        e.id,
      );
      assertEquals(
        sortedKeys(envC),
        sortedKeys([...logB, ...servedB]),
        e.id,
      );
      // The database ends the same.
      const dbC = canonicalJson(run.env.db);
      assertEquals(dbC, canonicalJson(envB.db), `${e.id}: database`);
      if (dbC !== before) changed++;
    }
    assertOk(changed >= 3, `${changed} episodes changed the database`);
    assertOk(replayed >= 6, `${replayed} episodes compared with the replay`);
    const stats = srv.server.modelGateway!.stats;
    assertEquals(stats.passed_through, 0, stats.last_pass_through ?? "");
    assertEquals(stats.refusals, refusedB);
    assertOk((stats.served ?? 0) > retail.held.length);
    // Seed 1 has an agent that re-reads what the package looked up.
    if (seed === 1) assertOk(repeatsServed > 0, "no repeated read");
  });
}

Deno.test("GatewayDriver follows AgentSession across a write: a lookup the model had made before it is made again once the user names it", async () => {
  const retail = retailOf(2);
  const TOOLS = RETAIL_CHAT_TOOLS;
  const run = async (write: Record<string, unknown>) => {
    const driver = new GatewayDriver(retail.pkg);
    const envG = new RetailEnv(retail.db);
    const envS = new RetailEnv(retail.db);
    const bySession: Call[] = [];
    const session = new AgentSession(retail.pkg, {
      tools: loggedTools(envS, bySession),
    });
    const byGateway: Call[] = [];
    const messages: Record<string, unknown>[] = [
      { role: "system", content: RETAIL_INSTRUCTIONS },
    ];
    let ids = 0;
    const made = (calls: Call[]) => {
      const batch = calls.map((c) => ({ id: `c${++ids}`, c }));
      messages.push({
        role: "assistant",
        content: null,
        tool_calls: batch.map(({ id, c }) => ({
          id,
          type: "function",
          function: { name: c.name, arguments: JSON.stringify(c.arguments) },
        })),
      });
      for (const { id, c } of batch) {
        byGateway.push(c);
        messages.push({
          role: "tool",
          tool_call_id: id,
          content: envG.respond(c.name, c.arguments),
        });
      }
    };
    /** What the gateway would do now; served lookups are run. */
    const drive = () => {
      for (;;) {
        const d = driver.decide(
          openaiChatWire.request({ model: "m", messages, tools: TOOLS }),
        );
        if (d.kind !== "serve") return d.kind;
        made(d.calls);
      }
    };
    const user = async (text: string) => {
      messages.push({ role: "user", content: text });
      await session.user(text);
      return drive();
    };
    // Lookups: the user, then each of her four orders.
    assertEquals(
      await user("Hi, my email is sofia.li7352@example.com."),
      "forward",
    );
    // The model reads an order the user has not named yet.
    const read = {
      name: "get_order_details",
      arguments: { order_id: "#W9300146" },
    };
    made([read]);
    await session.read(read.name, read.arguments);
    assertEquals(drive(), "forward");
    // A write, then the user names that order.
    made([{ name: "cancel_pending_order", arguments: write }]);
    try {
      await session.act({ tool: "cancel_pending_order", arguments: write });
    } catch { /* a failed write is still a write */ }
    assertEquals(drive(), "forward");
    // AgentSession looks the order up again (reads made before a write
    // are forgotten at the write); the gateway serves the same lookup.
    await user("Thanks. And what about order #W9300146?");
    return { bySession: keys(bySession), byGateway: keys(byGateway) };
  };
  for (
    const write of [
      // A write that succeeds (the pending order).
      { order_id: "#W8855135", reason: "no longer needed" },
      // A write that fails (a delivered order cannot be cancelled).
      { order_id: "#W4689314", reason: "no longer needed" },
    ]
  ) {
    const { bySession, byGateway } = await run(write);
    assertEquals(
      bySession.at(-1),
      'get_order_details {"order_id":"#W9300146"}',
    );
    assertEquals(byGateway, bySession);
  }
});
