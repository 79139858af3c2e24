/**
 * Runs one structure check of a hostile package as a process of its own,
 * so a check that never ends fails the test at its deadline instead of
 * hanging it, and its CPU time is its own: a worker's process also runs the
 * test files that `deno test --parallel` runs beside it, and wall time
 * counts whatever else the machine runs. Takes `SHAPE SIZE VIA` as
 * arguments; prints `{ms, cpu_ms, accepted, message, problems}` as JSON
 * (only the check is timed, not building the package).
 *
 * @module
 */
import { HOSTILE } from "./_hostile_packages.ts";
import { validatePackage } from "../../lib/forms/validate_package.ts";
import { checkStructure } from "../../lib/package/structure_check.ts";
import { NODE_KINDS } from "../../lib/forms/form_table.ts";
import type { BehaviorPackage } from "../../lib/package/package.ts";
import { cpuUsage } from "node:process";

const [shape, size, via] = Deno.args;
const doc = HOSTILE[shape](Number(size));
const t = performance.now();
const cpu = cpuUsage();
let message: string | null = null;
let problems = 0;
try {
  if (via === "validatePackage") validatePackage(doc);
  else {
    const found = checkStructure(
      doc as unknown as BehaviorPackage,
      null,
      NODE_KINDS,
    );
    problems = found.length;
    if (found.length) message = found.join("\n");
  }
} catch (err) {
  message = `${(err as Error).name}: ${(err as Error).message}`;
}
const used = cpuUsage(cpu);
console.log(JSON.stringify({
  ms: performance.now() - t,
  cpu_ms: (used.user + used.system) / 1000,
  accepted: message === null,
  message,
  problems,
}));
