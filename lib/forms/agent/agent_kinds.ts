/**
 * The agent form's node kinds behind the `NodeKind` contract
 * ({@linkcode AGENT_KINDS}): how a package's loader checks each one's
 * fields, what the structure check reads for it, its children, the tools
 * it calls, its effects against the manifest's, and its line in explain.
 *
 * @module
 */
import type { NodeKind } from "../../package/node_kind.ts";
import { NodeKinds } from "../../package/node_kind.ts";
import { describeSource } from "../../package/source.ts";
import type { AgentNode, ChoiceNode, LookupNode } from "./agent_nodes.ts";

const AGENT: NodeKind<AgentNode> = {
  kind: "agent",
  works: false,
  scoped: true,
  shapeProblem: (n) =>
    !Array.isArray(n.lookups) || !(n.fanout >= 1)
      ? `agent ${n.id} needs lookups and a fanout of at least 1`
      : null,
  children: (n) => n.choice ? [...n.lookups, n.choice] : n.lookups,
  describe: (n) =>
    `conversation: lookups ${
      n.lookups.join(", ") || "(none)"
    } as soon as their arguments bind (fan-out cap ${n.fanout}); state changes through ${
      n.choice ?? "(no choice leaf)"
    }`,
};

const LOOKUP: NodeKind<LookupNode> = {
  kind: "lookup",
  works: true,
  shapeProblem: (n) =>
    typeof n.tool !== "string" || !Array.isArray(n.args)
      ? `lookup ${n.id} needs tool and args`
      : null,
  tools: (n) => [n.tool],
  check: (n, scope) => scope.tool(n.id, n.tool),
  effectProblems: (n, effectOf) => {
    const m = effectOf(n.tool);
    return m !== undefined && m !== "read"
      ? [`${n.id}: a lookup calls ${n.tool}, ${m} in the manifest`]
      : [];
  },
  describe: (n) =>
    `look up ${n.tool}(${
      n.args.map((a) =>
        `${a.path} ∈ ${(a.sources ?? []).map(describeSource).join(" ∪ ")}`
      ).join(", ")
    })`,
};

function choiceShape(n: ChoiceNode): string | null {
  if (
    typeof n.signature !== "string" || !Array.isArray(n.tools) ||
    !n.tools.every((t) => typeof t?.tool === "string")
  ) {
    return `choice ${n.id} needs signature and tools, each naming its tool`;
  }
  if (
    n.unseen_tools !== undefined &&
    (!Array.isArray(n.unseen_tools) ||
      !n.unseen_tools.every((t) =>
        typeof t?.tool === "string" && typeof t?.effect === "string"
      ))
  ) {
    return `choice ${n.id}: unseen_tools must be a list of {tool, effect}`;
  }
  return null;
}

const CHOICE: NodeKind<ChoiceNode> = {
  kind: "choice",
  works: true,
  shapeProblem: choiceShape,
  tools: (n) => n.tools.map((t) => t.tool),
  check: (n, scope) => {
    scope.signature(n.id, n.signature);
    for (const t of n.tools) scope.tool(n.id, t.tool);
  },
  effectProblems: (n, effectOf) => {
    const out: string[] = [];
    for (const t of [...n.tools, ...(n.unseen_tools ?? [])]) {
      const m = effectOf(t.tool);
      if (m !== undefined && m !== t.effect) {
        out.push(
          `${n.id}: ${t.tool} is ${t.effect} there, ${m} in the manifest`,
        );
      }
    }
    return out;
  },
  describe: (n) =>
    `model chooses one of ${
      n.tools.map((t) => t.tool).join(", ")
    }, every argument from its candidates${
      n.unseen_tools?.length
        ? `, or by argument name: ${
          n.unseen_tools.map((t) => t.tool).join(", ")
        }`
        : ""
    } (${n.signature})`,
};

/** The agent form's node kinds. */
export const AGENT_KINDS: NodeKinds = new NodeKinds([
  AGENT,
  LOOKUP,
  CHOICE,
] as NodeKind[]);
