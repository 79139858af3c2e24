import type { BehaviorIr } from "../../lib/package/ir.ts";
import type { AnyNode as IrNode } from "../../lib/forms/form_table.ts";

/** An agent-form IR whose only lookup is `node` (no choice leaf, cap 5). */
export function agentIrWith(
  node: Extract<IrNode, { kind: "lookup" }>,
): BehaviorIr {
  return {
    schema_version: "harness.ir.v1",
    name: "t",
    root: "agent",
    nodes: {
      agent: {
        id: "agent",
        kind: "agent",
        lookups: [node.id],
        choice: null,
        fanout: 5,
      },
      [node.id]: node,
    },
    stores: [],
    variables: [],
    inputs: ["input.user"],
  };
}
