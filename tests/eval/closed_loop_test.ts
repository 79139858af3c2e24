import { assertEquals, assertOk } from "../_assert.ts";
import { loadTauData } from "../../eval/tau_data.ts";
import { closedLoopSeed } from "../../eval/closed_loop.ts";
import { startScriptedModelServer } from "../../eval/scripted_model_server.ts";
import { openModel } from "../../lib/models/open_model.ts";
import { changesState } from "../../lib/package/tool_effects.ts";
import { RETAIL_TOOL_SCHEMAS } from "../../eval/envs/tau2/mod.ts";

const read = (p: string) =>
  Deno.readTextFileSync(new URL(`../../fixtures/${p}`, import.meta.url));

Deno.test("closedLoopSeed runs held-out τ² retail tasks live through the OpenAI binding: the package solves what the agent alone solves, with fewer model requests and no wrong write", async () => {
  const text = read("tau2_retail_slice.json");
  const data = loadTauData(text, {
    matchText: read("tau2_retail_slice_task_match.json"),
  });
  const writes = new Set(
    Object.keys(data.effects).filter((t) => changesState(data.effects, t)),
  );
  await using server = startScriptedModelServer({ writes });
  const r = await closedLoopSeed(data, {
    seed: 2,
    setup: {
      db: JSON.parse(read("tau2_retail_db.json")),
      schemas: RETAIL_TOOL_SCHEMAS.map(({ name, description, parameters }) => ({
        name,
        description,
        parameters,
      })),
      instructions: "You are a retail customer service agent.",
      simulations: JSON.parse(text).simulations,
      server,
      openChat: (url) => openModel("openai/recorded-agent", { url, env: {} }),
    },
  });
  assertOk(r.episodes.length >= 5, `${r.episodes.length} held-out tasks`);
  const agentSolved = r.episodes.filter((e) => e.agent.solved);
  assertOk(agentSolved.length >= 4, `agent solved ${agentSolved.length}`);
  for (const e of agentSolved) {
    assertOk(e.package.solved, `${e.id}: ${e.package.status}`);
  }
  for (const e of r.episodes) {
    assertEquals(e.package.wrong, 0, e.id);
    assertEquals(e.agent.wrong, 0, e.id);
    assertOk(e.package.requests < e.agent.requests, e.id);
    assertOk(e.package.prompt_tokens > 0 && e.agent.prompt_tokens > 0);
  }
  const sum = (f: (e: typeof r.episodes[number]) => number) =>
    r.episodes.reduce((a, e) => a + f(e), 0);
  assertOk(
    sum((e) => e.package.prompt_tokens) < sum((e) => e.agent.prompt_tokens),
  );
  assertOk(sum((e) => e.package.lookups) > 0);
});
