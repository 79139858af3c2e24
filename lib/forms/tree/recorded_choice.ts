/**
 * The recorded choice of a predict leaf: what the model must have answered
 * for the episode to go as it went. Replay (the verifier, held-out
 * coverage) feeds it to the leaf instead of a model: the tree engine's
 * `predict` request is answered with {@linkcode recordedOutputs}.
 *
 * @module
 */
import type { NormStep } from "../../lineage/records.ts";
import type { IrNode } from "../../package/ir.ts";
import { argAt } from "./expressions.ts";

/**
 * The variables a predict leaf would write, from the step it serves.
 *
 * @param node The predict leaf.
 * @param target The episode's step the leaf's decision feeds (the next core step).
 * @returns Variable → recorded value.
 */
export function recordedChoice(
  node: Extract<IrNode, { kind: "predict" }>,
  target: NormStep | undefined,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, variable] of Object.entries(node.outputs)) {
    out[variable] = recordedOutput(node, name, target);
  }
  return out;
}

/**
 * The outputs a predict leaf's model must have answered, by output name
 * (the answer to the tree engine's `predict` request).
 *
 * @param node The predict leaf.
 * @param target The episode's step the leaf's decision feeds (the next core step).
 * @returns Output name → recorded value.
 */
export function recordedOutputs(
  node: Extract<IrNode, { kind: "predict" }>,
  target: NormStep | undefined,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of Object.keys(node.outputs)) {
    out[name] = recordedOutput(node, name, target);
  }
  return out;
}

function recordedOutput(
  node: Extract<IrNode, { kind: "predict" }>,
  name: string,
  target: NormStep | undefined,
): unknown {
  const d = node.decides;
  if (d.kind === "arm") return target?.logical_tool ?? null;
  if (d.kind === "value") {
    return argAt(target?.arguments, d.args?.[name] ?? d.arg ?? "");
  }
  const m = /\[(\d+)\]/.exec(target?.arg_lineage[d.arg ?? ""] ?? "");
  return m ? Number(m[1]) : null;
}
