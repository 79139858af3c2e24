/**
 * Child process of the import benchmark: imports one τ² file into a store,
 * `streamed` (`ingest.ts import`, a trajectory at a time) or `whole` (the
 * file read, parsed and converted in memory, then one append: what the
 * import did before), and prints the time taken as JSON (the parent
 * measures its peak resident memory with `/usr/bin/time`).
 *
 * @module
 */
import { main } from "../ingest.ts";
import { convertTrajectories } from "../lib/importers/trajectories.ts";
import { HarnessStore } from "../lib/store/mod.ts";

const [mode, file, root] = Deno.args;
const started = performance.now();
if (mode === "streamed") {
  const code = await main(
    ["import", file, "--format", "tau2", "--capture", "big", "--root", root],
    { out: () => {}, err: (t) => console.error(t) },
  );
  if (code !== 0) Deno.exit(code);
} else {
  const { episodes } = convertTrajectories(await Deno.readTextFile(file), {
    format: "tau2",
    captureId: "big",
  });
  using store = new HarnessStore(root);
  store.sink("big").emitMany(episodes.flatMap((e) => e.events));
}
console.log(JSON.stringify({ ms: performance.now() - started }));
