/**
 * The behavior IR (`harness.ir.v1`): a tree of nodes addressed by id, with
 * named stores (step results), variables (model choices) and typed
 * signatures for residual leaves. The node kinds are the forms' own (see
 * {@linkcode IrNode}). Its JSON Schema is
 * `docs/schema/harness.ir.v1.schema.json`.
 *
 * @module
 */

/** Version of the IR. */
export const IR_VERSION = "harness.ir.v1";

/**
 * A node of the IR: its id and its kind. Every other field is its kind's:
 * each form defines its node kinds in its own folder (the tree form's in
 * `lib/forms/tree/tree_nodes.ts`, the agent form's in
 * `lib/forms/agent/agent_nodes.ts`) and says how they are checked, walked
 * and described through the `NodeKind` contract (`node_kind.ts`).
 */
export type IrNode = {
  /** Node id (its key in `nodes`). */
  id: string;
  /** Its kind: one of a form's node kinds. */
  kind: string;
  /** The kind's own fields. */
  [field: string]: unknown;
};

/** A field of a signature. */
export interface SignatureField {
  /** JSON type: `string`, `number`, `integer`, `boolean`, `object`, `array`. */
  type: string;
  /** Allowed values, when the field is a choice. */
  enum?: unknown[];
  /** Inclusive bounds for integers (list indices). */
  minimum?: number;
  /** What it is. */
  description?: string;
}

/** The typed contract of a residual leaf. */
export interface Signature {
  /** Signature id. */
  id: string;
  /** `predict` or `react`. */
  kind: string;
  /** Inputs by name. */
  inputs: Record<string, SignatureField>;
  /** Outputs by name. */
  outputs: Record<string, SignatureField>;
  /** Wording for the model (from the compiler model, or derived). */
  instructions: string;
}

/** The behavior IR. */
export interface BehaviorIr {
  /** `harness.ir.v1`. */
  schema_version: string;
  /** Behavior name. */
  name: string;
  /** Root node id. */
  root: string;
  /** Nodes by id. */
  nodes: Record<string, IrNode>;
  /** Stores in the order they are written. */
  stores: string[];
  /** Variables model leaves write. */
  variables: string[];
  /** What the behavior expects as input: `input.text`, `input.task`. */
  inputs: string[];
}

/** Why a node exists. */
export interface NodeProvenance {
  /** Node id. */
  node_id: string;
  /** Candidates behind it. */
  candidate_ids: string[];
  /** Grade: the weakest of its candidates (E4 after clean replay). */
  grade: string;
  /** Episodes that support it (count). */
  support: number;
  /** Episodes it applied to (count). */
  applicable: number;
  /** Counterexamples (count). */
  counterexamples: number;
  /** Up to 10 supporting episode ids. */
  episodes: string[];
  /** A sentence on why. */
  why: string;
}

/** What staticization produces. */
export interface CompiledBehavior {
  /** The IR. */
  ir: BehaviorIr;
  /** Signatures of residual leaves by id. */
  signatures: Record<string, Signature>;
  /** Provenance per node. */
  provenance: NodeProvenance[];
  /** Counts. */
  stats: Record<string, number>;
  /** Tools the behavior calls. */
  required_capabilities: string[];
}
