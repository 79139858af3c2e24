/**
 * Runs one structure check of a hostile package off the test's thread, so
 * a check that never ends fails the test at its deadline instead of hanging
 * it. Takes `{shape, size, via}`; answers `{ms, cpu_ms, accepted, message}`
 * (only the check is timed, not building the package). `cpu_ms` is the
 * process's CPU time over the check (the test's thread only waits then), the
 * work it cost whatever else the machine is running.
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
  self.postMessage({
    ms: performance.now() - t,
    cpu_ms: (used.user + used.system) / 1000,
    accepted: message === null,
    message,
    problems,
  });
};
