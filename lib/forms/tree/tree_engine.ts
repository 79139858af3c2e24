/**
 * {@linkcode walkTree}: the one walker of the tree form (a prefix tree of
 * action, sequence, branch, predict, react and stop nodes over a
 * blackboard). It keeps the blackboard, resolves refs, chooses branch
 * arms, retries on `recovery.retry_on`, stops at fallback stops and where
 * it would have to guess, enters and leaves nodes in order, and lists the
 * steps; it never calls a tool or a model. It yields requests
 * (`tree_requests.ts`) and takes their answers, so the verifier and the
 * held-out evaluation (answers from a recorded episode, synchronously,
 * `driveTree` in `tree_drive.ts`) and the runtime (live tools and a model,
 * `driveTreeAsync`) walk the same code, like the agent form's
 * `AgentEngine`.
 *
 * @module
 */
import type { BehaviorIr, IrNode, Signature } from "../../package/ir.ts";
import { TREE_KINDS } from "./tree_kinds.ts";
import type { TreeNode } from "./tree_nodes.ts";
import {
  chooseCase,
  evalArgs,
  resolveRef,
  tryResolve,
  UnresolvedRefError,
} from "./expressions.ts";
import {
  type ActionNode,
  type CallOutcome,
  type PredictNode,
  type ReactNode,
  type RunStep,
  type TreeAnswer,
  type TreeEnd,
  type TreeModelCall,
  type TreeRequest,
  TreeStop,
  type TreeWalkGenerator,
  type TreeWalkOptions,
  type TreeWalkResult,
} from "./tree_requests.ts";
import { walkReactLeaf } from "./tree_react.ts";

/** A walk in progress: yields requests, keeps the state. */
type Walk = Generator<TreeRequest, void, TreeAnswer>;

class TreeWalk {
  readonly board: Record<string, unknown> = {};
  readonly steps: RunStep[] = [];
  readonly modelCalls: TreeModelCall[] = [];
  readonly path: string[] = [];
  readonly #ir: BehaviorIr;
  readonly #input: unknown;
  readonly #o: TreeWalkOptions;
  readonly #live: boolean;

  constructor(ir: BehaviorIr, input: unknown, options: TreeWalkOptions) {
    this.#ir = ir;
    this.#input = input;
    this.#o = options;
    this.#live = (options.oracle ?? "live") === "live";
    if (input !== undefined) this.board.input = input;
  }

  *exec(id: string): Walk {
    const n: IrNode = this.#ir.nodes[id];
    this.path.push(id);
    const token = this.#o.observer?.enter?.(n);
    let status = "ok";
    try {
      yield* this.#run(n);
    } catch (err) {
      status = err instanceof TreeStop ? err.status : "failed";
      throw err;
    } finally {
      this.#o.observer?.exit?.(n, status, token);
    }
  }

  *#run(node: IrNode): Walk {
    if (!TREE_KINDS.has(node.kind)) {
      // Another form's node (a hand-made package that mixes forms): the
      // walk does not run it.
      const a = yield { kind: "foreign", node };
      if (this.#halted(a, node.id)) return;
      throw new TreeStop(
        "stopped",
        `${node.id}: a ${node.kind} node is not the tree form's; a package runs in the form its root names (formOf)`,
        "refused",
        node.id,
      );
    }
    const n = node as TreeNode;
    switch (n.kind) {
      case "sequence":
        for (const c of n.children) yield* this.exec(c);
        return;
      case "stop":
        throw new TreeStop("stopped", n.reason, "stop_node", n.id);
      case "branch": {
        const value = tryResolve(this.board, n.on);
        const matched = chooseCase(value, n.cases);
        const then = matched ?? n.otherwise;
        const a = yield {
          kind: "branch",
          node: n,
          value,
          then,
          matched: matched !== null,
        };
        this.#halted(a, n.id);
        if (matched === null) {
          this.steps.push({
            node_id: n.id,
            kind: "branch",
            result: value ?? null,
          });
        }
        yield* this.exec(then);
        return;
      }
      case "action":
        yield* this.#action(n);
        return;
      case "predict":
        yield* this.#predict(n);
        return;
      case "react":
        yield* this.#react(n);
        return;
    }
  }

  /** Throws the driver's halt; true when the answer is a skip. */
  #halted(a: TreeAnswer, node: string): boolean {
    if (a && typeof a === "object") {
      if ("halt" in a) {
        throw new TreeStop(a.halt.status, a.halt.reason, "halt", node);
      }
      if ("skip" in a) return true;
    }
    return false;
  }

  #write(key: string, value: unknown): void {
    this.board[key] = value;
    this.#o.observer?.write?.(key, value);
  }

  *#action(n: ActionNode): Walk {
    let args: Record<string, unknown>;
    try {
      args = evalArgs(n.args, this.board);
    } catch (error) {
      const a = yield { kind: "unresolved", node: n, tool: n.tool, error };
      this.#halted(a, n.id);
      if (!(error instanceof UnresolvedRefError)) throw error;
      throw new TreeStop(
        "stopped",
        `${n.id}: ${error.message}; stopping rather than guessing`,
        "refused",
        n.id,
      );
    }
    const max = Math.max(1, n.recovery?.max_attempts ?? 1); // one call at least
    for (let attempt = 1; attempt <= max; attempt++) {
      const a = yield { kind: "call", node: n, tool: n.tool, args, attempt };
      this.#halted(a, n.id);
      const o = a as CallOutcome;
      const step = {
        node_id: n.id,
        kind: "action",
        tool: n.tool,
        arguments: args,
      };
      if (o.ok) {
        this.steps.push({ ...step, result: o.result, attempts: attempt });
        this.#write(n.store, this.#live ? o.result ?? null : o.result);
        return;
      }
      const code = o.error.code;
      const retriable = typeof code === "string" &&
        (n.recovery?.retry_on ?? []).includes(code);
      if (!retriable || attempt === max) {
        this.steps.push({ ...step, error: o.error, attempts: attempt });
        throw new TreeStop(
          "failed",
          `${n.id}: ${n.tool} failed (${o.error.message})${
            retriable ? ` after ${attempt} attempts` : ""
          }`,
          "failed",
          n.id,
        );
      }
    }
  }

  #inputs(n: PredictNode): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [name, path] of Object.entries(n.inputs)) {
      if (!this.#live) {
        const v = tryResolve(this.board, path);
        if (v !== undefined) out[name] = v;
        continue;
      }
      try {
        out[name] = resolveRef(this.board, path);
      } catch {
        throw new TreeStop(
          "stopped",
          `${n.id}: input ${name} (${path}) does not resolve on this instance; stopping rather than guessing`,
          "refused",
          n.id,
        );
      }
    }
    return out;
  }

  *#predict(n: PredictNode): Walk {
    const signature: Signature | undefined = this.#o.signatures[n.signature];
    const inputs = this.#inputs(n);
    const a = yield { kind: "predict", node: n, signature, inputs };
    this.#halted(a, n.id);
    const outputs = (a as { outputs: Record<string, unknown> }).outputs;
    this.modelCalls.push({
      node_id: n.id,
      signature: n.signature,
      inputs,
      outputs,
    });
    const check = this.#o.checkField;
    if (check) {
      for (const [name, field] of Object.entries(signature!.outputs)) {
        const problem = check(outputs?.[name], field);
        if (problem) {
          throw new TreeStop(
            "stopped",
            `${n.id}: the model's ${name} does not fit the signature (${problem}); stopping rather than guessing`,
            "refused",
            n.id,
          );
        }
      }
    }
    for (const [name, variable] of Object.entries(n.outputs)) {
      this.#write(variable, outputs[name]);
    }
    this.steps.push({ node_id: n.id, kind: "predict", result: outputs });
  }

  *#react(n: ReactNode): Walk {
    const signature: Signature | undefined = this.#o.signatures[n.signature];
    const open = yield { kind: "react_open", node: n, signature };
    if (this.#halted(open, n.id)) return;
    yield* walkReactLeaf(n, {
      signature,
      request: (this.#input as { text?: string } | undefined)?.text ?? null,
      hasTool: this.#o.hasTool ?? (() => true),
      halted: (a) => this.#halted(a, n.id),
      write: (key, value) => this.#write(key, value),
      steps: this.steps,
      modelCalls: this.modelCalls,
    });
  }
}

/**
 * Walk a tree-form behavior on one instance, yielding every tool call,
 * model leaf and choice to the driver and taking its answers.
 *
 * @param ir A tree-form IR.
 * @param options The input, signatures, the oracle, answer checks, tracing hooks.
 * @returns A generator: it yields requests, takes answers, and returns the result.
 * @throws {TypeError} (From the generator) when a node is missing or the driver's answer has the wrong shape; an error the driver throws into it comes back out after the open nodes are left.
 */
export function* walkTree(
  ir: BehaviorIr,
  options: TreeWalkOptions,
): TreeWalkGenerator {
  const w = new TreeWalk(ir, options.input, options);
  const result = (
    status: TreeWalkResult["status"],
    reason: string | null,
    end: TreeEnd,
    node: string | null,
  ): TreeWalkResult => ({
    status,
    reason,
    end,
    node,
    board: w.board,
    steps: w.steps,
    model_calls: w.modelCalls,
    path: w.path,
  });
  try {
    yield* w.exec(ir.root);
  } catch (err) {
    if (!(err instanceof TreeStop)) throw err;
    return result(err.status, err.message, err.end, err.node);
  }
  return result("completed", null, "end", null);
}
