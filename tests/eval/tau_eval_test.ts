import { assertEquals, assertOk } from "../_assert.ts";
import { tauEval } from "../../bench/tau_eval.ts";
import { HarnessStore } from "../../mod.ts";
import {
  DESK_EFFECTS,
  generateDeskEpisodes,
} from "../../lib/taskfamily/order_desk.ts";
import { loadEpisodes } from "../../lib/lineage/episodes.ts";
import { normalizeAll } from "../../lib/lineage/normalize.ts";
import { compileBehavior } from "../../lib/compiler/package.ts";
import {
  addCoverage,
  coverageOf,
  emptyCoverage,
} from "../../lib/eval/coverage.ts";
import { tempDir } from "../_helpers.ts";

Deno.test("the τ²-bench evaluation is deterministic and the package defers rather than guesses (wrong calls <= 1%)", async () => {
  await using dir = await tempDir();
  const a = await tauEval({ outDir: `${dir.path}/a`, quiet: true });
  const b = await tauEval({ outDir: `${dir.path}/b`, quiet: true });
  assertEquals(
    Deno.readTextFileSync(`${dir.path}/a/tau_eval.json`),
    Deno.readTextFileSync(`${dir.path}/b/tau_eval.json`),
  );
  assertEquals(
    Deno.readTextFileSync(`${dir.path}/a/tau_eval.md`),
    Deno.readTextFileSync(`${dir.path}/b/tau_eval.md`),
  );
  const o = a.overall as {
    wrong_share: number;
    lineage_precision: number;
    coverage: { calls: number };
  };
  assertOk(o.wrong_share <= 0.01, `wrong share ${o.wrong_share}`);
  assertOk(o.lineage_precision >= 0.99);
  assertOk(o.coverage.calls > 100);
  assertEquals(JSON.stringify(a), JSON.stringify(b));
});

Deno.test("held-out coverage on the order desk: every call deterministic or a residual choice, none wrong", async () => {
  await using dir = await tempDir();
  using store = new HarnessStore(dir.path);
  generateDeskEpisodes(store.sink("d"), "d", 150);
  const eps = normalizeAll(await loadEpisodes(store, "d"));
  const train = eps.filter((_, i) => i % 5 !== 0);
  const held = eps.filter((_, i) => i % 5 === 0);
  const r = compileBehavior(train, {
    name: "desk",
    effects: DESK_EFFECTS,
    contracts: {
      "predicate|find_user>list_orders>get_order|get_order#0.status": [
        "policy",
      ],
    },
  });
  const total = emptyCoverage();
  for (const e of held) {
    addCoverage(total, coverageOf(r.compiled, e, DESK_EFFECTS));
  }
  assertEquals(total.wrong, 0);
  // Only get_order's order_id needs the model; noise steps are the uncovered ones.
  assertEquals(total.residual, held.length);
  assertOk(total.deterministic / total.calls > 0.65, JSON.stringify(total));
});
