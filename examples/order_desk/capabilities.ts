/**
 * Capabilities for running an order-desk package: the tools of a fresh
 * instance of the task and a deterministic model binding that stands in
 * for a language model at residual leaves (it matches the request's words
 * against the options). Used by the tests, the demo and `compile.ts run`.
 *
 * `compile.ts run` calls `createCapabilities({episode})` and reads `input`,
 * `tools`, `model` and `outcome` from what it returns.
 *
 * @module
 */
import { OrderDesk } from "./order_desk.ts";
import type { ToolRegistry } from "../../lib/runtime/runtime_types.ts";
import type { ModelBinding } from "../../lib/forms/tree/tree_run_types.ts";
import type { Signature } from "../../lib/package/ir.ts";

/**
 * A deterministic "model" for the desk's residual leaves: an index is the
 * option whose item the request names; an arm follows the order's status.
 */
export const deskModel: ModelBinding = {
  id: "desk-matcher-v1",
  predict(signature: Signature, inputs: Record<string, unknown>) {
    const request = String(inputs.request ?? "").toLowerCase();
    const out: Record<string, unknown> = {};
    for (const [name, field] of Object.entries(signature.outputs)) {
      if (name === "index") {
        const options = (inputs.options ?? []) as { item?: string }[];
        out.index = Math.max(
          0,
          options.findIndex((o) =>
            request.includes(String(o.item).toLowerCase())
          ),
        );
      } else if (field.enum) {
        const order = Object.values(inputs).find((v) =>
          (v as { status?: string })?.status
        ) as
          | { status: string }
          | undefined;
        out[name] = order?.status === "delivered" ? "refund" : "cancel";
      } else out[name] = null;
    }
    return out;
  },
};

/** What a capability module returns. */
export interface Capabilities {
  /** Input of the run. */
  input: { text: string };
  /** Tools by name. */
  tools: ToolRegistry;
  /** Model binding for residual leaves. */
  model: ModelBinding;
  /** The environment's judgment of the run. */
  outcome: () => { success: boolean; [k: string]: unknown };
  /** The environment (for inspection). */
  desk: OrderDesk;
}

/**
 * A fresh task instance.
 *
 * @param options Episode number (ids derive from it; use numbers no training episode had).
 * @returns Input, tools, model, outcome.
 */
export function createCapabilities(
  options: { episode?: number; seed?: number } = {},
): Capabilities {
  const desk = new OrderDesk(options.episode ?? 900_000, options.seed ?? 7);
  return {
    input: { text: desk.prompt() },
    tools: desk.tools(),
    model: deskModel,
    outcome: () => desk.outcome(),
    desk,
  };
}
