/**
 * The react leaf, live: the tree engine (`forms/tree/tree_engine.ts`) runs
 * its bounded loop — the model picks a tool of the leaf's toolset (or
 * finishes), the tool is called, the history grows — and these functions
 * answer its requests with the bound model and tools.
 *
 * @module
 */
import type { ReactNode, TreeAnswer } from "./tree_requests.ts";
import type { Signature } from "../../package/ir.ts";
import { type BoundTool, callWithArgs } from "../../runtime/bind_args.ts";
import type { ModelBinding } from "./tree_run_types.ts";

/**
 * Open a react leaf: refuse when the model cannot drive one, else show the
 * leaf's toolset (traced when `trace` is given).
 *
 * @param node The leaf.
 * @param model The model binding.
 * @param trace Records the toolset exposed to the model (null without a sink).
 * @returns Nothing to go on, or a halt naming what is missing.
 */
export function openReactLeaf(
  node: ReactNode,
  model: ModelBinding,
  trace: ((tools: { name: string; logical_id: string }[]) => unknown) | null,
): TreeAnswer {
  if (!model.react) {
    return {
      halt: {
        status: "stopped",
        reason: `${node.id}: the model binding has no react()`,
      },
    };
  }
  trace?.(node.tools.map((t) => ({ name: t, logical_id: t })));
}

/**
 * The model's next step in a react leaf.
 *
 * @param model The model binding (with `react`).
 * @param signature The leaf's signature.
 * @param context The leaf's tools, its history so far, its inputs.
 * @returns The decision.
 */
export async function reactDecision(
  model: ModelBinding,
  signature: Signature | undefined,
  context: {
    tools: string[];
    history: unknown[];
    inputs: Record<string, unknown>;
  },
): Promise<TreeAnswer> {
  return { decision: await model.react!(signature!, context) };
}

/**
 * Call a tool a react leaf's model chose (not traced as a tool call: the
 * leaf's model calls carry it).
 *
 * @param tool Tool name.
 * @param fn The bound tool.
 * @param args Arguments.
 * @returns The result, or the error's message.
 */
export async function reactToolCall(
  tool: string,
  fn: BoundTool,
  args: Record<string, unknown>,
): Promise<TreeAnswer> {
  try {
    return { ok: true, result: await callWithArgs(tool, fn, args) };
  } catch (err) {
    return { ok: false, error: { message: (err as Error).message } };
  }
}
