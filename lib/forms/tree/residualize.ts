/**
 * Residual leaves: a model decision that no data determined becomes a
 * typed {@linkcode Signature} and a `predict` leaf (preferred: the model
 * fills typed outputs, then deterministic actions use them) or a `react`
 * leaf. Signatures are derived deterministically from the lineage; a
 * compiler model may only propose the wording.
 *
 * @module
 */
import type { ModelDecision } from "../../lineage/records.ts";
import type { Signature, SignatureField } from "../../package/ir.ts";
import type { Decides, TreeNode } from "./tree_nodes.ts";

/** An optional compiler model: it may word a signature's instructions, nothing else. */
export interface CompilerModel {
  /** Model id, recorded in the manifest. */
  id: string;
  /**
   * Propose instructions for a signature.
   * @param signature The derived signature.
   */
  word(signature: Signature): string;
}

/** What a decision is about, beyond the seed's record. */
export interface DecisionDetail {
  /** Input name → state path. */
  inputs: Record<string, string>;
  /** Output name → variable the leaf writes, with its type. */
  outputs: Record<string, { variable: string; field: SignatureField }>;
  /** What the leaf decides, in words. */
  purpose: string;
  /** What the leaf decides, for the runtime and for replay. */
  decides?: Decides;
}

/** Options of {@linkcode residualizeDecision}. */
export interface ResidualizeOptions {
  /** A compiler model (wording only). */
  model?: CompilerModel | null;
  /** Typed inputs and outputs (derived from the lineage by the staticizer). */
  detail?: DecisionDetail;
  /** Prefer `react` (an open tool loop) over `predict`. */
  react?: { tools: string[]; maxSteps: number; store: string };
}

/**
 * Turn a decision into a signature and a leaf.
 *
 * @param decision The decision.
 * @param options Model, typed detail, react.
 * @returns The signature and the leaf node.
 */
export function residualizeDecision(
  decision: ModelDecision,
  options: ResidualizeOptions = {},
): { signature: Signature; leaf: TreeNode } {
  const id = `sig_${decision.node_id ?? `d${decision.index}`}`;
  const detail: DecisionDetail = options.detail ?? {
    inputs: Object.fromEntries(decision.inputs.map((k) => [k, k])),
    outputs: Object.fromEntries(
      decision.outputs.map((
        o,
      ) => [o, { variable: o, field: { type: "string" } }]),
    ),
    purpose: `choose ${decision.outputs.join(", ")}`,
  };
  const inputs: Record<string, SignatureField> = {};
  for (const [name, path] of Object.entries(detail.inputs)) {
    inputs[name] = { type: "json", description: `the value at ${path}` };
  }
  const outputs: Record<string, SignatureField> = {};
  for (const [name, o] of Object.entries(detail.outputs)) {
    outputs[name] = o.field;
  }
  const signature: Signature = {
    id,
    kind: options.react
      ? "react"
      : decision.kind === "react"
      ? "react"
      : "predict",
    inputs,
    outputs,
    instructions: "",
  };
  signature.instructions = options.model?.word(signature) ??
    `Given ${
        Object.keys(inputs).join(", ") || "the task"
      }, ${detail.purpose}. ` +
      `Answer with ${
        Object.entries(outputs).map(([n, f]) =>
          `${n} (${f.type}${
            f.enum
              ? `: one of ${f.enum.map((x) => JSON.stringify(x)).join(", ")}`
              : ""
          })`
        ).join(", ")
      }.`;
  const leafId = `p_${decision.node_id ?? `d${decision.index}`}`;
  const leaf: TreeNode = options.react
    ? {
      id: leafId,
      kind: "react",
      signature: id,
      tools: options.react.tools,
      max_steps: options.react.maxSteps,
      store: options.react.store,
    }
    : {
      id: leafId,
      kind: "predict",
      signature: id,
      inputs: detail.inputs,
      outputs: Object.fromEntries(
        Object.entries(detail.outputs).map(([n, o]) => [n, o.variable]),
      ),
      decides: detail.decides ??
        { kind: "value", node: decision.node_id ?? "" },
    };
  return { signature, leaf };
}
