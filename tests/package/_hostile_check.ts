/**
 * Runs one structure check of a hostile package as a process of its own,
 * so a check that never ends is killed by the test's guard (`hangGuard`)
 * instead of hanging it. Its work is counted, not timed: every lookup of a node's kind
 * (`NodeKinds.get`, through which the shape check, the tools and the
 * structure walk reach each node) is counted on this process's own kinds
 * table, so a walk that revisits nodes shows in the count whatever else the
 * machine runs. Takes `SHAPE SIZE VIA` as arguments; prints `{ms, cpu_ms,
 * lookups, nodes, slots, accepted, message, problems}` as JSON (`ms` and
 * `cpu_ms`: the test shows them in a failure message only;
 * `bench/_reliability_packages.ts` reports `cpu_ms`).
 *
 * @module
 */
import { HOSTILE } from "./_hostile_packages.ts";
import { validatePackage } from "../../lib/forms/validate_package.ts";
import { checkStructure } from "../../lib/package/structure_check.ts";
import { NODE_KINDS } from "../../lib/forms/form_table.ts";
import type { BehaviorPackage } from "../../lib/package/package.ts";
import type { IrNode } from "../../lib/package/ir.ts";
import { cpuUsage } from "node:process";

const [shape, size, via] = Deno.args;
const doc = HOSTILE[shape](Number(size));
const nodes = Object.values(
  (doc.ir as { nodes: Record<string, IrNode> }).nodes,
);
// The document's size: its nodes and the child slots they list.
const slots = nodes.reduce(
  (n, node) => n + NODE_KINDS.children(node).length,
  0,
);
let lookups = 0;
const get = NODE_KINDS.get.bind(NODE_KINDS);
NODE_KINDS.get = (kind: unknown) => (lookups++, get(kind));
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
  lookups,
  nodes: nodes.length,
  slots,
  accepted: message === null,
  message,
  problems,
}));
