/**
 * The protocol of the tree engine ({@linkcode walkTree} in
 * `tree_engine.ts`): the requests the walk yields to its driver, the
 * answers it takes back, what it reports as it goes and what it returns.
 * A driver answers from an oracle — a recorded episode (verification,
 * held-out coverage) or live tools and a model (the runtime) — and does
 * nothing else: the walk itself keeps the blackboard, resolves refs,
 * chooses arms, retries, stops and lists the steps.
 *
 * @module
 */
import type { IrNode, Signature, SignatureField } from "../../package/ir.ts";
import type {
  ActionNode,
  BranchNode,
  PredictNode,
  ReactNode,
} from "./tree_nodes.ts";

export type { ActionNode, BranchNode, PredictNode, ReactNode };

/** A node of a kind the tree form does not have (another form's), which the walk does not run. */
export type ForeignNode = IrNode;

/** A normalized tool error (`name`, `message`, and `code` when it is a string). */
export interface ToolErrorRecord {
  /** Error class name. */
  name?: string;
  /** Message. */
  message?: unknown;
  /** Error code (retried when the action's recovery names it). */
  code?: string;
}

/** What came of one tool call. */
export type CallOutcome =
  | { ok: true; result: unknown }
  | { ok: false; error: ToolErrorRecord };

/** One step of a react leaf's loop, as the model decided it. */
export type TreeReactDecision =
  | { tool: string; arguments: Record<string, unknown> }
  | { done: true; result?: unknown };

/** A request the walk yields; the driver answers it (see {@linkcode TreeAnswer}). */
export type TreeRequest =
  /** Call an action's tool (attempt 1, then retries): answer a {@linkcode CallOutcome}. */
  | {
    kind: "call";
    node: ActionNode;
    tool: string;
    args: Record<string, unknown>;
    attempt: number;
  }
  /** An action's arguments do not resolve: answer nothing (the walk stops rather than guess). */
  | { kind: "unresolved"; node: ActionNode; tool: string; error: unknown }
  /** Fill a predict leaf: answer `{outputs}` (output name → value). */
  | {
    kind: "predict";
    node: PredictNode;
    signature: Signature | undefined;
    inputs: Record<string, unknown>;
  }
  /** A branch chose `then` (`matched`: a case, not `otherwise`): answer nothing. */
  | {
    kind: "branch";
    node: BranchNode;
    value: unknown;
    then: string;
    matched: boolean;
  }
  /** A react leaf opens its toolset: answer nothing, or `{skip: true}` to pass over the leaf. */
  | { kind: "react_open"; node: ReactNode; signature: Signature | undefined }
  /** A react leaf's next step: answer `{decision}`. */
  | {
    kind: "react";
    node: ReactNode;
    signature: Signature | undefined;
    tools: string[];
    history: unknown[];
    inputs: Record<string, unknown>;
    step: number;
  }
  /** Call a tool a react leaf's model chose: answer a {@linkcode CallOutcome}. */
  | {
    kind: "react_call";
    node: ReactNode;
    tool: string;
    args: Record<string, unknown>;
  }
  /** A node of a kind the tree form does not have: answer nothing (the walk stops), or `{skip: true}`. */
  | { kind: "foreign"; node: ForeignNode };

/** The driver ends the walk here (a mismatch with the episode, a missing model capability). */
export interface TreeHalt {
  /** Status and reason the walk ends with. */
  halt: { status: "stopped" | "failed"; reason: string };
}

/** An answer to a {@linkcode TreeRequest}. */
export type TreeAnswer =
  | CallOutcome
  | { outputs: Record<string, unknown> }
  | { decision: TreeReactDecision }
  | { skip: true }
  | TreeHalt
  | undefined
  | void;

/** One executed step of a walk (replay's and a live run's). */
export interface RunStep {
  /** Node id. */
  node_id: string;
  /** Node kind. */
  kind: string;
  /** Tool called (actions, react calls). */
  tool?: string;
  /** Arguments. */
  arguments?: Record<string, unknown>;
  /** Result. */
  result?: unknown;
  /** Error of the last attempt. */
  error?: unknown;
  /** Calls made. */
  attempts?: number;
}

/** A model leaf's call. */
export interface TreeModelCall {
  /** Node id. */
  node_id: string;
  /** Signature id. */
  signature: string;
  /** Inputs given. */
  inputs: Record<string, unknown>;
  /** What came back. */
  outputs: Record<string, unknown>;
}

/**
 * How a walk ended: `end` (it walked the whole tree), `stop_node` (a
 * fallback stop), `halt` (the driver ended it), `refused` (the walk stopped
 * rather than guess: a ref that does not resolve, an answer that breaks its
 * signature, a react leaf out of bounds, an agent-form node), `failed` (a
 * tool error with no recovery).
 */
export type TreeEnd = "end" | "stop_node" | "halt" | "refused" | "failed";

/** What a walk returns. */
export interface TreeWalkResult {
  /** `completed`, `stopped` or `failed`. */
  status: "completed" | "stopped" | "failed";
  /** Why it stopped or failed. */
  reason: string | null;
  /** How it ended. */
  end: TreeEnd;
  /** The node it ended at (null when it walked the whole tree). */
  node: string | null;
  /** The blackboard: `input`, stores and variables. */
  board: Record<string, unknown>;
  /** Steps in order. */
  steps: RunStep[];
  /** Model leaves' calls in order. */
  model_calls: TreeModelCall[];
  /** The nodes entered, in order (which arms the branches took). */
  path: string[];
}

/** What the walk reports as it goes (tracing); every hook is optional. */
export interface TreeObserver {
  /** A node is entered; what it returns is given back to `exit`. */
  enter?(node: IrNode): unknown;
  /** A node is left with `ok`, `stopped` or `failed`. */
  exit?(node: IrNode, status: string, token: unknown): void;
  /** A store or variable was written. */
  write?(key: string, value: unknown): void;
}

/** Options of {@linkcode walkTree}. */
export interface TreeWalkOptions {
  /** The task input (`text`, `task`); undefined leaves the blackboard without `input`. */
  input: unknown;
  /** Signatures of the residual leaves by id. */
  signatures: Record<string, Signature>;
  /**
   * Who answers: `live` (tools and a model: a predict leaf's inputs must
   * resolve, and a tool's missing result is stored as null) or `recorded`
   * (an episode: inputs are resolved where they can be, and results are
   * stored as recorded).
   * @default "live"
   */
  oracle?: "live" | "recorded";
  /**
   * Why a predict answer's value does not fit its signature field (null
   * when it fits). Absent: answers are not checked (recorded choices are
   * facts of the episode, judged by the calls they lead to).
   */
  checkField?: (value: unknown, field: SignatureField) => string | null;
  /**
   * Whether a tool a react leaf's model chose is bound.
   * @default every tool is bound
   */
  hasTool?: (tool: string) => boolean;
  /** Tracing hooks. */
  observer?: TreeObserver | null;
}

/** A walk in progress, as `walkTree` returns it: it yields requests, takes answers, returns the result. */
export type TreeWalkGenerator = Generator<
  TreeRequest,
  TreeWalkResult,
  TreeAnswer
>;

/**
 * How the walk ends early (a fallback stop, a driver's halt, a refusal, a
 * tool failure): thrown inside the walk and caught at its root, never out
 * of `walkTree`.
 */
export class TreeStop extends Error {
  /** `stopped` or `failed`. */
  readonly status: "stopped" | "failed";
  /** How the walk ended. */
  readonly end: TreeEnd;
  /** The node it ended at. */
  readonly node: string;

  /**
   * Create a `TreeStop`.
   *
   * @param status `stopped` or `failed`.
   * @param reason Why, as the run reports it.
   * @param end How the walk ended.
   * @param node The node it ended at.
   */
  constructor(
    status: "stopped" | "failed",
    reason: string,
    end: TreeEnd,
    node: string,
  ) {
    super(reason);
    this.name = "TreeStop";
    this.status = status;
    this.end = end;
    this.node = node;
  }
}
