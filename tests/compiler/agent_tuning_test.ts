import { assertEquals, assertOk } from "../_assert.ts";
import { loadTauData } from "../../lib/eval/tau_data.ts";
import { learnBindings } from "../../lib/compiler/bindings.ts";
import { buildAgentForm } from "../../lib/compiler/agent_form.ts";
import { evaluateSeed } from "../../lib/eval/split_eval.ts";

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
