/**
 * An agent-form package in the words of the person who recorded the
 * sessions ({@linkcode explainAgent}): which reads it makes without asking
 * the model, which state changes the model still decides and what values
 * the package refuses, and that everything else is the model's. `explain`
 * prints this first (`Form.explain`).
 *
 * @module
 */
import type { BehaviorPackage } from "../../package/package.ts";
import { describeSource } from "../../package/source.ts";
import type { AgentFormNode, BoundArg } from "./agent_nodes.ts";

function boundText(a: BoundArg): string {
  return a.sources === null
    ? `${a.path} is free text`
    : `${a.path} must be ${a.sources.map(describeSource).join(" or ")}`;
}

/**
 * An agent-form package in plain words.
 *
 * @param pkg The package.
 * @returns The lines (after the heading `explain` writes).
 */
export function explainAgent(pkg: BehaviorPackage): string[] {
  const out: string[] = ["  it runs beside the model in a conversation:"];
  const nodes = Object.values(pkg.ir.nodes) as AgentFormNode[];
  for (const n of nodes) {
    if (n.kind !== "lookup") continue;
    out.push(
      `  - ${n.tool} is called without asking the model, as soon as its arguments are known (${
        n.args.map(boundText).join("; ")
      }); the model sees the result as if it had asked`,
    );
  }
  for (const n of nodes) {
    if (n.kind !== "choice") continue;
    for (const t of n.tools) {
      out.push(
        `  - ${t.tool} (it changes things): the model decides when, and the package refuses values the sessions never justified (${
          t.args.map(boundText).join("; ") || "no arguments"
        })`,
      );
    }
  }
  out.push(
    "  - everything else (what to say, which other tools to call) is the model's, as without the package",
  );
  return out;
}
