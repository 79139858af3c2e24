/**
 * The tree form's node kinds, as records: a sequence of steps, an action
 * (one tool call), a branch on a recorded value, a predict leaf (the model
 * fills a value, an index or an arm), a react leaf (the model acts with
 * tools for a bounded number of steps) and a stop. How each kind is
 * checked, walked and described is `tree_kinds.ts`.
 *
 * @module
 */

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

/** Steps in order. */
export type SequenceNode = { id: string; kind: "sequence"; children: string[] };

/** One tool call, its result kept in a store. */
export type ActionNode = {
  id: string;
  kind: "action";
  tool: string;
  args: Record<string, ArgExpr>;
  store: string;
  effect: string;
  recovery: Recovery | null;
};

/** An arm per recorded value of a path, and one for any other. */
export type BranchNode = {
  id: string;
  kind: "branch";
  on: string;
  cases: { equals: unknown; then: string }[];
  otherwise: string;
};

/** A residual leaf: the model fills what `decides` says. */
export type PredictNode = {
  id: string;
  kind: "predict";
  signature: string;
  inputs: Record<string, string>;
  outputs: Record<string, string>;
  decides: Decides;
};

/** A residual leaf: the model acts with tools for at most `max_steps` calls. */
export type ReactNode = {
  id: string;
  kind: "react";
  signature: string;
  tools: string[];
  max_steps: number;
  store: string;
};

/** Where the tree stops rather than guess. */
export type StopNode = { id: string; kind: "stop"; reason: string };

/** A node of the tree form. */
export type TreeNode =
  | SequenceNode
  | ActionNode
  | BranchNode
  | PredictNode
  | ReactNode
  | StopNode;

/**
 * The nodes of a tree-form IR, as the tree form's records (the IR is the
 * form's own: the table gives the tree form only IRs whose root it owns).
 *
 * @param ir A tree-form IR.
 * @returns Its nodes by id.
 */
export function treeNodes(
  ir: { nodes: Record<string, unknown> },
): Record<string, TreeNode> {
  return ir.nodes as Record<string, TreeNode>;
}
