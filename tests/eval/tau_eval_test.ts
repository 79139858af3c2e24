import { assertEquals, assertOk } from "../_assert.ts";
import { tauEval } from "../../bench/tau_eval.ts";
import { HarnessStore } from "../../lib/store/mod.ts";
import {
  DESK_EFFECTS,
  generateDeskEpisodes,
} from "../../examples/order_desk/order_desk.ts";
import { loadEpisodes } from "../../lib/lineage/episodes.ts";
import { normalizeAll } from "../../lib/lineage/normalize.ts";
import { compileBehavior } from "../../lib/compiler/compile_behavior.ts";
import {
  addCoverage,
  coverageOf,
  emptyCoverage,
} from "../../lib/forms/tree/coverage.ts";
import { tempDir } from "../_helpers.ts";
import { loadTauData } from "../../eval/tau_data.ts";

const SLICE = new URL("../../fixtures/tau2_retail_slice.json", import.meta.url)
  .pathname;

Deno.test("the τ² evaluation on the vendored slice: deterministic, every required field, no wrong call, ranges over seeds", async () => {
  await using dir = await tempDir();
  const a = await tauEval({
    data: SLICE,
    seeds: 3,
    outDir: `${dir.path}/a`,
    quiet: true,
  });
  const b = await tauEval({
    data: SLICE,
    seeds: 3,
    outDir: `${dir.path}/b`,
    quiet: true,
  });
  assertEquals(
    Deno.readTextFileSync(`${dir.path}/a/tau_eval.json`),
    Deno.readTextFileSync(`${dir.path}/b/tau_eval.json`),
  );
  assertEquals(
    Deno.readTextFileSync(`${dir.path}/a/tau_eval.md`),
    Deno.readTextFileSync(`${dir.path}/b/tau_eval.md`),
  );
  const h = a.heldout as {
    calls: number;
    deterministic: { min: number; max: number };
    wrong: { max: number };
    extra_lookups_per_episode: { max: number };
    model_turns_per_episode: { agent: number; package: number };
  };
  assertEquals(a.seeds, 3);
  assertOk(h.calls > 50, `held-out calls ${h.calls}`);
  assertOk(h.deterministic.min <= h.deterministic.max);
  assertOk(h.deterministic.min > 0.2, JSON.stringify(h));
  assertEquals(h.wrong.max, 0);
  assertOk(h.extra_lookups_per_episode.max <= 5, JSON.stringify(h));
  assertOk(
    h.model_turns_per_episode.package < h.model_turns_per_episode.agent,
    JSON.stringify(h),
  );
  const l = a.lineage as {
    precision: number;
    recall: number;
    matched_through_task_match_file: number;
  };
  // The slice's task-match file is found beside it.
  assertOk(l.matched_through_task_match_file >= 30);
  assertOk(l.precision >= 0.99 && l.recall >= 0.95, JSON.stringify(l));
  assertEquals(JSON.stringify(a), JSON.stringify(b));
});

Deno.test("the evaluation names a data file it cannot read", async () => {
  let message = "";
  try {
    await tauEval({ data: "/nonexistent/x.json", outDir: null, quiet: true });
  } catch (err) {
    message = (err as Error).message;
  }
  assertOk(message.includes("--data"), message);
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
    addCoverage(
      total,
      coverageOf(r.compiled, { episode: e, effects: DESK_EFFECTS }),
    );
  }
  assertEquals(total.wrong, 0);
  // Only get_order's order_id needs the model; noise steps are the uncovered ones.
  assertEquals(total.residual, held.length);
  assertOk(total.deterministic / total.calls > 0.65, JSON.stringify(total));
});

Deno.test("loadTauData() loads a file to the same events every time, so a package compiled from it has one digest", () => {
  const text = Deno.readTextFileSync(SLICE);
  const [a, b] = [loadTauData(text), loadTauData(text)];
  assertEquals(a.episodes[0].episode, b.episodes[0].episode);
  const digest = (d: typeof a) =>
    compileBehavior(
      d.episodes.filter((e) => e.norm.success === true).map((e) => e.norm),
      { name: "tau", effects: d.effects, tune: false },
    ).package.digest;
  assertEquals(digest(a), digest(b));
});
