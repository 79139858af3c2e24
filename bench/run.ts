/**
 * Runs every benchmark and prints one table per area. `deno task bench`;
 * `deno task bench ingest --baseline DIR` also measures this checkout's
 * ingest server against another checkout's (e.g. a `git worktree` of an
 * older commit) in interleaved rounds. `deno task bench gateway` measures the
 * latency the model gateway adds against going straight to the upstream;
 * `deno task bench gateway --loop` runs the closed loop through it (a
 * compiled package served inside an unmodified agent, `gateway_loop.ts`).
 * `deno task bench hooks` measures what one hook call costs the host
 * (`hooks_bench.ts`); `deno task bench bodies` what recording Claude Code's
 * requests costs, long fields once against every body whole
 * (`bodies_bench.ts`).
 *
 * @module
 */
import { storeBench } from "./store_bench.ts";
import { ingestBench } from "./ingest_bench.ts";
import { proxyBench } from "./proxy_bench.ts";
import { lineageBench } from "./lineage_bench.ts";
import { compileBench } from "./compile_bench.ts";
import { runtimeBench } from "./runtime_bench.ts";
import { reliabilityBench } from "./reliability_bench.ts";
import { replicateBench } from "./replicate_bench.ts";
import { exportBench } from "./export_bench.ts";
import { reportBench } from "./report_bench.ts";

console.log("# harness benchmarks");
console.log(
  `deno ${Deno.version.deno}, ${navigator.hardwareConcurrency} cores; figures from one run, ratios against baselines measured in the same run`,
);
const only = Deno.args[0];
const at = Deno.args.indexOf("--baseline");
const baseline = at >= 0 ? Deno.args[at + 1] : undefined;
if (!only || only === "store") await storeBench();
if (!only || only === "ingest") await ingestBench(5, { baseline });
if (!only || only === "proxy") await proxyBench();
if (!only || only === "lineage") lineageBench();
if (!only || only === "compile") await compileBench();
if (!only || only === "runtime") await runtimeBench();
if (only === "reliability") await reliabilityBench();
if (only === "replicate") await replicateBench();
if (!only || only === "export") await exportBench();
if (only === "report") await reportBench();
if (only === "gateway" && Deno.args.includes("--loop")) {
  const { gatewayLoop } = await import("./gateway_loop.ts");
  await gatewayLoop(Deno.args.slice(1));
} else if (only === "gateway") {
  const { gatewayBench } = await import("./gateway_bench.ts");
  await gatewayBench(Deno.args.slice(1));
}
if (only === "hooks") {
  const { hooksBench } = await import("./hooks_bench.ts");
  await hooksBench(Deno.args.slice(1));
}
if (only === "import") {
  const { importBench } = await import("./import_bench.ts");
  await importBench(Deno.args.slice(1));
}
if (only === "bodies") {
  const { bodiesBench } = await import("./bodies_bench.ts");
  await bodiesBench(Deno.args.slice(1));
}
if (only === "loop") {
  const { loopBench } = await import("./loop_bench.ts");
  await loopBench(Deno.args.slice(1));
}
