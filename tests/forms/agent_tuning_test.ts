import { assertEquals, assertOk } from "../_assert.ts";
import { loadTauData } from "../../eval/tau_data.ts";
import { learnBindings } from "../../lib/forms/agent/bindings.ts";
import { buildAgentForm } from "../../lib/forms/agent/build_agent_form.ts";
import { evaluateSeed } from "../../eval/split_eval.ts";
import {
  adjacentVariants,
  primaryVariant,
} from "../../lib/forms/agent/lookup_variants.ts";
import { replayAgent } from "../../lib/forms/agent/agent_replay.ts";
import { AgentEngine } from "../../lib/forms/agent/agent_engine.ts";
import { agentIrWith } from "./_agent_ir.ts";

const slice = loadTauData(
  Deno.readTextFileSync(
    new URL("../../fixtures/tau2_retail_slice.json", import.meta.url),
  ),
);
const ok = slice.episodes.filter((e) => e.norm.success === true)
  .map((e) => e.norm);

Deno.test("learnBindings() takes the speculative coverage: a stricter share makes no more bindings speculative", () => {
  const speculative = (coverage: number) =>
    learnBindings(ok, { effects: slice.effects, speculativeCoverage: coverage })
      .filter((b) => b.lookup.speculative).length;
  const loose = speculative(0.5);
  const strict = speculative(1.01);
  assertEquals(
    speculative(0.9),
    learnBindings(ok, { effects: slice.effects })
      .filter((b) => b.lookup.speculative).length,
  );
  assertOk(strict < loose, `${strict} < ${loose}`);
});

Deno.test("learnBindings() takes the adjacency share: a lower share pairs more user words `after` another", () => {
  const after = (share?: number) =>
    learnBindings(ok, { effects: slice.effects, adjacentShare: share })
      .flatMap((b) => b.lookup.sources)
      .filter((s) => s.from === "user" && s.after !== undefined).length;
  assertEquals(after(), after(0.8));
  assertEquals(after(1.01), 0);
  assertOk(after(0.5) > after(0.8), `${after(0.5)} > ${after(0.8)}`);
  assertOk(after(0) > after(0.5), `${after(0)} > ${after(0.5)}`);
});

Deno.test("buildAgentForm() takes minYield: a yield no node reaches keeps no lookup", () => {
  const all = buildAgentForm(ok, { effects: slice.effects });
  const none = buildAgentForm(ok, { effects: slice.effects, minYield: 1.01 });
  assertOk(all.compiled.stats.lookup_nodes > 0);
  assertEquals(none.compiled.stats.lookup_nodes, 0);
  assertOk(none.dropped.some((d) => /needs 101%/.test(d.why)));
});

Deno.test("evaluateSeed() passes the tuning parameters to the compiler", () => {
  const base = evaluateSeed(slice, 1, { validate: true });
  const strict = evaluateSeed(slice, 1, { validate: true, minYield: 1.01 });
  assertOk(base.lookups.length > 0);
  assertEquals(strict.lookups, []);
  assertEquals(strict.deterministic, 0);
});

Deno.test("primaryVariant() keeps each argument's first source, null when each has one", () => {
  const node = {
    id: "lookup_get_user_details",
    kind: "lookup" as const,
    tool: "get_user_details",
    args: [{
      path: "user_id",
      sources: [
        { from: "user" as const, shape: "a_a_9" },
        {
          from: "result" as const,
          tool: "get_reservation_details",
          path: ["*"],
        },
      ],
    }],
  };
  const p = primaryVariant(node)!;
  assertEquals(p.id, "lookup_get_user_details_primary");
  assertEquals(p.args[0].sources, [{ from: "user", shape: "a_a_9" }]);
  assertEquals(primaryVariant(p), null);
});

Deno.test("adjacentVariants() pairs two user words of one shape by position, both ways; the paired argument comes after", () => {
  const node = {
    id: "lookup_find_user_id_by_name_zip",
    kind: "lookup" as const,
    tool: "find_user_id_by_name_zip",
    args: [
      { path: "first_name", sources: [{ from: "user" as const, shape: "Aa" }] },
      { path: "last_name", sources: [{ from: "user" as const, shape: "Aa" }] },
      { path: "zip", sources: [{ from: "user" as const, shape: "9{5}" }] },
    ],
  };
  const vs = adjacentVariants(node);
  assertEquals(vs.map((v) => v.id), [
    "lookup_find_user_id_by_name_zip_after_first_name_last_name",
    "lookup_find_user_id_by_name_zip_after_last_name_first_name",
  ]);
  assertEquals(vs[0].args.map((a) => a.path), [
    "first_name",
    "zip",
    "last_name",
  ]);
  assertEquals(vs[0].args[2].sources, [
    { from: "user", shape: "Aa", after: "first_name" },
  ]);
  assertEquals(vs[0].args[1], node.args[2]);
  // Already paired, or nothing of one shape twice: no variant.
  assertEquals(adjacentVariants(vs[0]), []);
  assertEquals(adjacentVariants({ ...node, args: node.args.slice(1) }), []);
  // The engine then looks up only the word right after the first name.
  const ir = agentIrWith(vs[0]);
  const plainIr = agentIrWith(node);
  const said = "Hi, I am Yusuf Rossi from Boston, zip 19122.";
  const paired = new AgentEngine(ir);
  paired.user(said);
  // Capitalised words: Hi, Yusuf, Rossi, Boston; only Yusuf has one
  // right after it.
  assertEquals(paired.dueLookups().map((c) => c.args), [
    { first_name: "Yusuf", zip: "19122", last_name: "Rossi" },
  ]);
  const plain = new AgentEngine(plainIr);
  plain.user(said);
  assertEquals(plain.dueLookups(), [], "16 pairs pass the cap of 5");
});

Deno.test("replayAgent() counts capped lookups by node, summing to capped", () => {
  const form = buildAgentForm(ok, { effects: slice.effects, fanout: 1 });
  const ir = form.compiled.ir;
  let capped = 0, byNode = 0;
  for (const e of slice.episodes) {
    const r = replayAgent(ir, { episode: e.norm, effects: slice.effects });
    capped += r.capped;
    for (const [id, n] of Object.entries(r.capped_by_node)) {
      assertEquals(ir.nodes[id]?.kind, "lookup");
      byNode += n;
    }
  }
  assertOk(capped > 0, "a fan-out cap of 1 is passed on the slice");
  assertEquals(byNode, capped);
});
