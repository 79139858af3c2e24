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
import { callWithArgs, type NamedCall } from "../../runtime/bind_args.ts";
import type { ModelBinding } from "./tree_run_types.ts";

/** What {@linkcode openReactLeaf} opens a leaf with. */
export interface ReactLeafOpening {
  /** The model binding. */
  model: ModelBinding;
  /** Records the toolset exposed to the model (null without a sink). */
  trace: ((tools: { name: string; logical_id: string }[]) => unknown) | null;
}

/**
 * Open a react leaf: refuse when the model cannot drive one, else show the
 * leaf's toolset (traced when `trace` is given).
 *
 * @param node The leaf.
 * @param leaf The model binding and the toolset's trace.
 * @returns Nothing to go on, or a halt naming what is missing.
 */
export function openReactLeaf(
  node: ReactNode,
  leaf: ReactLeafOpening,
): TreeAnswer {
  const { model, trace } = leaf;
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

/** What {@linkcode reactDecision} asks the model about. */
export interface ReactStep {
  /** The leaf's signature. */
  signature: Signature | undefined;
  /** The leaf's tools, its history so far, its inputs. */
  context: {
    tools: string[];
    history: unknown[];
    inputs: Record<string, unknown>;
  };
}

/**
 * The model's next step in a react leaf.
 *
 * @param model The model binding (with `react`).
 * @param step The leaf's signature and context (tools, history so far, inputs).
 * @returns The decision.
 */
export async function reactDecision(
  model: ModelBinding,
  step: ReactStep,
): Promise<TreeAnswer> {
  const { signature, context } = step;
  return { decision: await model.react!(signature!, context) };
}

/**
 * Call a tool a react leaf's model chose (not traced as a tool call: the
 * leaf's model calls carry it).
 *
 * @param call The tool, its name and the arguments.
 * @returns The result, or the error's message.
 */
export async function reactToolCall(call: NamedCall): Promise<TreeAnswer> {
  try {
    return { ok: true, result: await callWithArgs(call) };
  } catch (err) {
    return { ok: false, error: { message: (err as Error).message } };
  }
}
