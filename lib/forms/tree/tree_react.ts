/**
 * The react leaf's bounded loop, as the tree engine walks it: the model
 * picks a tool of the leaf's toolset (or finishes), the tool is called,
 * the history grows; a tool outside the toolset, or no finish within
 * `max_steps`, stops the walk. The driver answers the `react` and
 * `react_call` requests (`tree_requests.ts`).
 *
 * @module
 */
import type { Signature } from "../../package/ir.ts";
import {
  type CallOutcome,
  type ReactNode,
  type RunStep,
  type TreeAnswer,
  type TreeModelCall,
  type TreeReactDecision,
  type TreeRequest,
  TreeStop,
} from "./tree_requests.ts";

/** What the loop needs from the walk. */
export interface ReactLeafContext {
  /** The leaf's signature. */
  signature: Signature | undefined;
  /** The request text (`input.text`), or null. */
  request: string | null;
  /** Whether a tool is bound. */
  hasTool: (tool: string) => boolean;
  /** Throws the driver's halt; true when the answer is a skip. */
  halted: (answer: TreeAnswer) => boolean;
  /** Write a store. */
  write: (key: string, value: unknown) => void;
  /** Steps of the walk (appended to). */
  steps: RunStep[];
  /** Model calls of the walk (appended to). */
  modelCalls: TreeModelCall[];
}

/**
 * Walk a react leaf's loop.
 *
 * @param n The leaf.
 * @param ctx What it needs from the walk.
 * @returns A generator of `react` and `react_call` requests.
 * @throws {TreeStop} (From the generator) when the model asks for a tool outside the toolset or does not finish.
 */
export function* walkReactLeaf(
  n: ReactNode,
  ctx: ReactLeafContext,
): Generator<TreeRequest, void, TreeAnswer> {
  const history: unknown[] = [];
  for (let step = 0; step < n.max_steps; step++) {
    const a = yield {
      kind: "react",
      node: n,
      signature: ctx.signature,
      tools: n.tools,
      history,
      inputs: { request: ctx.request },
      step,
    };
    if (ctx.halted(a)) return;
    const d = (a as { decision: TreeReactDecision }).decision;
    ctx.modelCalls.push({
      node_id: n.id,
      signature: n.signature,
      inputs: { history: history.length },
      outputs: d as Record<string, unknown>,
    });
    if ("done" in d) {
      ctx.write(n.store, d.result ?? null);
      return;
    }
    if (!n.tools.includes(d.tool) || !ctx.hasTool(d.tool)) {
      throw new TreeStop(
        "stopped",
        `${n.id}: the model asked for ${d.tool}, which is not in this leaf's toolset`,
        "refused",
        n.id,
      );
    }
    const call = { tool: d.tool, arguments: d.arguments };
    const o = yield {
      kind: "react_call",
      node: n,
      tool: d.tool,
      args: d.arguments,
    };
    ctx.halted(o);
    const outcome = o as CallOutcome;
    if (outcome.ok) {
      history.push({ ...call, result: outcome.result });
      ctx.steps.push({
        node_id: n.id,
        kind: "react",
        ...call,
        result: outcome.result,
      });
    } else history.push({ ...call, error: outcome.error.message });
  }
  throw new TreeStop(
    "stopped",
    `${n.id}: the react leaf used its ${n.max_steps} steps without finishing`,
    "refused",
    n.id,
  );
}
