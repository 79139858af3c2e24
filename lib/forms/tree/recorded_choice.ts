/**
 * The recorded choice of a predict leaf: what the model must have answered
 * for the episode to go as it went. Replay (the verifier, held-out
 * coverage) feeds it to the leaf instead of a model: the tree engine's
 * `predict` request is answered with {@linkcode recordedOutputs}.
 *
 * @module
 */
import type { NormStep } from "../../lineage/records.ts";
import type { PredictNode } from "./tree_nodes.ts";
import { argAt } from "./expressions.ts";

/**
 * The outputs a predict leaf's model must have answered, by output name
 * (the answer to the tree engine's `predict` request).
 *
 * @param node The predict leaf.
 * @param target The episode's step the leaf's decision feeds (the next core step).
 * @returns Output name → recorded value.
 */
export function recordedOutputs(
  node: PredictNode,
  target: NormStep | undefined,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of Object.keys(node.outputs)) {
    out[name] = recordedOutput(node, name, target);
  }
  return out;
}

function recordedOutput(
  node: PredictNode,
  name: string,
  target: NormStep | undefined,
): unknown {
  const d = node.decides;
  if (d.kind === "arm") return target?.logical_tool ?? null;
  if (d.kind === "value") {
    const value = argAt(target?.arguments, d.args?.[name] ?? d.arg ?? "");
    const template = d.within?.[name];
    return template === undefined
      ? value
      : partOf({ template, variable: node.outputs[name], value });
  }
  const m = /\[(\d+)\]/.exec(target?.arg_lineage[d.arg ?? ""] ?? "");
  return m ? Number(m[1]) : null;
}

/**
 * The part of a recorded argument that a template's `$ref(variable)`
 * stands for: the template's literal text must match where it stands, any
 * other ref matches the shortest text that lets the whole value match.
 *
 * @param at The argument's template, the variable, the recorded value.
 * @returns The part, or null when the value does not fit the template.
 *
 * @example
 * ```ts
 * import { partOf } from "./recorded_choice.ts";
 * import { strictEqual } from "node:assert/strict";
 * strictEqual(
 *   partOf({
 *     template: "balance $ref(Bash_2.stdout~word[1])\nstatus: $ref(v)\n",
 *     variable: "v",
 *     value: "balance 12.00\nstatus: covered\n",
 *   }),
 *   "covered",
 * );
 * ```
 */
export function partOf(
  at: { template: string; variable: string; value: unknown },
): string | null {
  if (typeof at.value !== "string") return null;
  const escape = (t: string) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  let pattern = "";
  let last = 0;
  for (const m of at.template.matchAll(/\$ref\(([^)]*)\)/g)) {
    pattern += escape(at.template.slice(last, m.index));
    pattern += m[1] === at.variable ? "([\\s\\S]*?)" : "[\\s\\S]*?";
    last = m.index + m[0].length;
  }
  pattern += escape(at.template.slice(last));
  return new RegExp(`^${pattern}$`).exec(at.value)?.[1] ?? null;
}
