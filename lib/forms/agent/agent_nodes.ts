/**
 * The agent form's node kinds, as records: the `agent` root (its lookups,
 * its choice leaf and their fan-out cap), a `lookup` (a read made as soon
 * as its arguments bind) and the `choice` leaf (the state-changing tools
 * the model may pick, each argument restricted to its sources). How each
 * kind is checked, walked and described is `agent_kinds.ts`.
 *
 * @module
 */
import type { Source } from "../../package/source.ts";

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

/** The root of an agent-form IR. */
export type AgentNode = {
  id: string;
  kind: "agent";
  lookups: string[];
  choice: string | null;
  fanout: number;
};

/** A read the package makes as soon as its arguments bind. */
export type LookupNode = {
  id: string;
  kind: "lookup";
  tool: string;
  args: BoundArg[];
  /**
   * This node's fan-out cap when training shows the agent calling the
   * tool more often in one conversation than the agent root's cap.
   */
  fanout?: number;
};

/** The choice leaf: the state-changing tools the model may pick. */
export type ChoiceNode = {
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

/** A node of the agent form. */
export type AgentFormNode = AgentNode | LookupNode | ChoiceNode;

/**
 * The nodes of an agent-form IR, as the agent form's records (the IR is
 * the form's own: the table gives the agent form only IRs whose root it
 * owns).
 *
 * @param ir An agent-form IR.
 * @returns Its nodes by id.
 */
export function agentNodes(
  ir: { nodes: Record<string, unknown> },
): Record<string, AgentFormNode> {
  return ir.nodes as Record<string, AgentFormNode>;
}
