/**
 * The behavior IR (`harness.ir.v1`): a tree of nodes addressed by id, with
 * named stores (step results), variables (model choices) and typed
 * signatures for residual leaves. Its JSON Schema is
 * `docs/schema/harness.ir.v1.schema.json`.
 *
 * @module
 */

/** Version of the IR. */
export const IR_VERSION = "harness.ir.v1";

import type { Source } from "./source.ts";

/** How an action argument gets its value. */
export type ArgExpr =
  | { const: unknown }
  | { ref: string }
  | { template: string };

/** Bounded retry of an action on known error codes. */
export interface Recovery {
  /** Error codes that are retried. */
  retry_on: string[];
  /** Attempts in all (first call included). */
  max_attempts: number;
}

/** What a predict leaf decides: a list index, an argument value, or which arm a branch takes. */
export interface Decides {
  /** `index`, `value` or `arm`. */
  kind: "index" | "value" | "arm";
  /** The action (index, value) or branch (arm) it serves. */
  node: string;
  /** The argument it feeds (index, value). */
  arg?: string;
  /** Value leaves with several outputs: output name → argument path. */
  args?: Record<string, string>;
  /**
   * Value leaves that write a part of an argument: output name → the
   * argument's template, in which the output's variable is one
   * `$ref(variable)` (the part no earlier result determines; replay reads
   * the recorded part by matching the recorded argument to the template).
   */
  within?: Record<string, string>;
}

/** A node of the IR. */
export type IrNode =
  | { id: string; kind: "sequence"; children: string[] }
  | {
    id: string;
    kind: "action";
    tool: string;
    args: Record<string, ArgExpr>;
    store: string;
    effect: string;
    recovery: Recovery | null;
  }
  | {
    id: string;
    kind: "branch";
    on: string;
    cases: { equals: unknown; then: string }[];
    otherwise: string;
  }
  | {
    id: string;
    kind: "predict";
    signature: string;
    inputs: Record<string, string>;
    outputs: Record<string, string>;
    decides: Decides;
  }
  | {
    id: string;
    kind: "react";
    signature: string;
    tools: string[];
    max_steps: number;
    store: string;
  }
  | { id: string; kind: "stop"; reason: string }
  | {
    id: string;
    kind: "agent";
    lookups: string[];
    choice: string | null;
    fanout: number;
  }
  | {
    id: string;
    kind: "lookup";
    tool: string;
    args: BoundArg[];
    /**
     * This node's fan-out cap when training shows the agent calling the
     * tool more often in one conversation than the agent root's cap.
     */
    fanout?: number;
  }
  | {
    id: string;
    kind: "choice";
    signature: string;
    tools: ChoiceTool[];
    /**
     * State-changing tools the package's effects know that training never
     * made. Each argument of a call is checked against the sources of the
     * arguments of the same name in `tools` (state-changing arguments pool
     * their sources by name); an argument no tool above has is free for a
     * `write` tool and refused for a `destructive` one.
     */
    unseen_tools?: { tool: string; effect: string }[];
  };

/** An argument of a lookup or a choice and where its values may come from. */
export interface BoundArg {
  /** Argument path (`order_id`; list items as `item_ids[*]`). */
  path: string;
  /** The union of sources (null: free text, only for tools that are not destructive). */
  sources: Source[] | null;
}

/** A state-changing tool a choice leaf may pick, with its restricted arguments. */
export interface ChoiceTool {
  /** Tool. */
  tool: string;
  /** Its effect (`write`, `destructive`). */
  effect: string;
  /** Every argument seen in training. */
  args: BoundArg[];
}

/** The kinds of node. */
export type IrNodeKind = IrNode["kind"];

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
