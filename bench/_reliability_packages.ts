/**
 * Hostile packages, timed (a row of `deno task bench reliability`): each
 * shape of `tests/package/_hostile_packages.ts` checked in a process of its
 * own by `tests/package/_hostile_check.ts`, its CPU time read from that
 * process. `tests/package/package_hostile_test.ts` checks what is refused
 * and that the work (lookups of a node's kind) is linear in the document;
 * how long the check takes is measured here, not in a test.
 *
 * @module
 */
import type { BenchRow } from "./_table.ts";

const CHECK = new URL("../tests/package/_hostile_check.ts", import.meta.url)
  .pathname;

/** The shapes checked: name, size, and which check. */
const SHAPES: [string, number, "validatePackage" | "checkStructure"][] = [
  ["wideSequence", 200_000, "checkStructure"],
  ["wideSequence", 20_000, "validatePackage"],
  ["nestedSequences", 5_000, "validatePackage"],
  ["chainedBranches", 200, "validatePackage"],
  ["sharedArms", 30, "validatePackage"],
  ["listedTwice", 30, "validatePackage"],
];

/**
 * Check each hostile shape once and make the row.
 *
 * @returns The reliability table's row.
 */
export async function hostilePackagesRow(): Promise<BenchRow> {
  const parts: string[] = [];
  let slowest = 0;
  for (const [shape, size, via] of SHAPES) {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--quiet", "--allow-read", CHECK, shape, String(size), via],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const r = out.success
      ? JSON.parse(new TextDecoder().decode(out.stdout)) as { cpu_ms: number }
      : { cpu_ms: Infinity };
    slowest = Math.max(slowest, r.cpu_ms);
    parts.push(`${shape}(${size}) ${r.cpu_ms.toFixed(0)}`);
  }
  return {
    name:
      "hostile packages: the structure check of each shape (a 200,000-action sequence by checkStructure, the rest by validatePackage), CPU of its own process",
    value: `${parts.join(", ")} ms`,
    target: "each < 1 s of CPU",
    met: slowest < 1_000 ? "yes" : "NO",
  };
}
