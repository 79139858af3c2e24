/**
 * The recorded choice of a predict leaf: what the model must have answered
 * for the episode to go as it went. Replay (the verifier, held-out
 * coverage) feeds it to the leaf instead of a model.
 *
 * @module
 */
import type { NormStep } from "../lineage/records.ts";
import type { IrNode } from "./ir.ts";
import { argAt } from "./evaluate.ts";

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
  const d = node.decides;
  const out: Record<string, unknown> = {};
  for (const [name, variable] of Object.entries(node.outputs)) {
    if (d.kind === "arm") out[variable] = target?.logical_tool ?? null;
    else if (d.kind === "value") {
      out[variable] = argAt(target?.arguments, d.args?.[name] ?? d.arg ?? "");
    } else {
      const m = /\[(\d+)\]/.exec(target?.arg_lineage[d.arg ?? ""] ?? "");
      out[variable] = m ? Number(m[1]) : null;
    }
  }
  return out;
}
