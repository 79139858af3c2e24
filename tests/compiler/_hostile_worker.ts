/**
 * Runs one structure check of a hostile package off the test's thread, so
 * a check that never ends fails the test at its deadline instead of hanging
 * it. Takes `{shape, size, via}`; answers `{ms, cpu_ms, accepted, message}`
 * (only the check is timed, not building the package). `cpu_ms` bounds
 * this thread's CPU time over the check: the smaller of the process's CPU
 * time (which also counts the test files running in parallel in this
 * process) and the wall time (which also counts what else the machine
 * runs); each is at least the thread's, and Deno reads no per-thread figure
 * without `--allow-all`.
 *
 * @module
 */
/// <reference lib="deno.worker" />
import { HOSTILE } from "./_hostile_packages.ts";
import { validatePackage } from "../../lib/package/load_package.ts";
import { checkStructure } from "../../lib/package/verification.ts";
import type { BehaviorPackage } from "../../lib/package/package.ts";
import { cpuUsage } from "node:process";

self.onmessage = (e: MessageEvent) => {
  const { shape, size, via } = e.data as {
    shape: string;
    size: number;
    via: "validatePackage" | "checkStructure";
  };
  const doc = HOSTILE[shape](size);
  const t = performance.now();
  const cpu = cpuUsage();
  let message: string | null = null;
  let problems = 0;
  try {
    if (via === "validatePackage") validatePackage(doc);
    else {
      const found = checkStructure(doc as unknown as BehaviorPackage, null);
      problems = found.length;
      if (found.length) message = found.join("\n");
    }
  } catch (err) {
    message = `${(err as Error).name}: ${(err as Error).message}`;
  }
  const used = cpuUsage(cpu);
  const ms = performance.now() - t;
  self.postMessage({
    ms,
    cpu_ms: Math.min((used.user + used.system) / 1000, ms),
    accepted: message === null,
    message,
    problems,
  });
};
