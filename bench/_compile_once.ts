/**
 * Child of the compile benchmark: generate N episodes into a temp store,
 * compile them, print one JSON line with the compile time (the parent
 * measures peak memory with /usr/bin/time).
 *
 * @module
 */
import { HarnessStore } from "../lib/store/mod.ts";
import {
  DESK_EFFECTS,
  generateDeskEpisodes,
} from "../examples/order_desk/order_desk.ts";
import { loadEpisodes } from "../lib/lineage/episodes.ts";
import { compileBehavior } from "../lib/compiler/compile_behavior.ts";

const n = Number(Deno.args[0]);
const root = await Deno.makeTempDir({ prefix: "harness_compile_bench_" });
try {
  const store = new HarnessStore(root);
  generateDeskEpisodes(store.sink("desk"), "desk", n, { noiseRate: 0.5 });
  const episodes = await loadEpisodes(store, "desk");
  store.close();
  const steps = episodes.reduce((a, e) => a + e.events.length, 0);
  const t0 = performance.now();
  const r = compileBehavior(episodes, {
    name: "desk",
    effects: DESK_EFFECTS,
    contracts: {
      "predicate|find_user>list_orders>get_order|get_order#0.status": [
        "policy",
      ],
    },
  });
  const seconds = (performance.now() - t0) / 1000;
  console.log(JSON.stringify({
    episodes: n,
    events: steps,
    seconds,
    replay: `${r.verification.replay_passed}/${r.verification.replay_checks}`,
  }));
} finally {
  await Deno.remove(root, { recursive: true });
}
