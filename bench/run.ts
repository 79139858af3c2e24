/**
 * Runs every benchmark and prints one table per area. `deno task bench`.
 *
 * @module
 */
import { storeBench } from "./store_bench.ts";

console.log("# harness benchmarks");
console.log(
  `deno ${Deno.version.deno}, ${navigator.hardwareConcurrency} cores; figures from one run, ratios against baselines measured in the same run`,
);
await storeBench();
