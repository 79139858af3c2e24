/**
 * The agent form's choice leaf: which state-changing tools it offers with
 * which restricted arguments (an argument with no restricting source, or
 * whose checking cover failed the held-out check, is left to the model:
 * a refusal needs evidence), the
 * tools training never made (checked by argument name), and the leaf's
 * signature.
 *
 * @module
 */
import type { Effects } from "../../package/tool_effects.ts";
import type { Signature } from "../../package/ir.ts";
import type { BoundArg, ChoiceTool } from "./agent_nodes.ts";
import { canonicalJson } from "../../trace/canonical_json.ts";
import type { Binding } from "./binding_types.ts";

/** The choice leaf's signature id. */
export const CHOICE_SIGNATURE = "choose_state_change";

/**
 * Training calls the checking cover of each argument name refused with
 * their episode held out, pooled over the state-changing tools that share
 * the name (their sources are pooled the same way).
 */
function heldOutRefusals(
  bindings: Binding[],
): Map<string, { calls: number; refused: number }> {
  const out = new Map<string, { calls: number; refused: number }>();
  for (const b of bindings) {
    if (!b.holdout) continue;
    const t = out.get(b.path) ?? { calls: 0, refused: 0 };
    t.calls += b.holdout.calls;
    t.refused += b.holdout.refused;
    out.set(b.path, t);
  }
  return out;
}

/**
 * The choice leaf's tools from the bindings.
 *
 * @param bindings Learned bindings.
 * @param effects Tool effects.
 * @returns The tools, the tools refused (none since a refusal needs
 *   evidence: kept for the report's shape), the arguments left to the model.
 */
export function choiceTools(bindings: Binding[], effects: Effects): {
  tools: ChoiceTool[];
  refused: { tool: string; why: string }[];
  freed: { tool: string; why: string }[];
} {
  const tools: ChoiceTool[] = [];
  const refused: { tool: string; why: string }[] = [];
  const freed: { tool: string; why: string }[] = [];
  const holdout = heldOutRefusals(bindings);
  const byTool = new Map<string, Binding[]>();
  for (const b of bindings) {
    byTool.set(b.tool, [...(byTool.get(b.tool) ?? []), b]);
  }
  for (const [tool, bs] of [...byTool].sort(([a], [b]) => a < b ? -1 : 1)) {
    const effect = effects[tool] ?? "write";
    if (effect === "read") continue;
    // An argument training gives no restricting source is left to the
    // model (the package has no evidence to refuse a value with), for a
    // destructive tool too: a call every training session made is never
    // refused for want of a source.
    const open = effect === "destructive"
      ? bs.filter((b) => !b.choice.deterministic)
      : [];
    for (const b of open) {
      freed.push({
        tool,
        why: `${b.path} left to the model: no restricting source in training`,
      });
    }
    // A cover that refused training calls with their episode held out
    // would refuse correct calls of new conversations: such an argument
    // is left to the model.
    const unstable = bs.filter((b) =>
      b.choice.deterministic && (holdout.get(b.path)?.refused ?? 0) > 0
    );
    for (const b of unstable) {
      const h = holdout.get(b.path)!;
      freed.push({
        tool,
        why: `${b.path} left to the model: with its episode held out, ${
          plural(h.refused, "training call")
        } of ${h.calls} (${b.path} of every state-changing tool) would have been refused`,
      });
    }
    tools.push({
      tool,
      effect,
      args: bs.map((b) => ({
        path: b.path,
        sources: b.choice.deterministic && !unstable.includes(b)
          ? b.choice.sources
          : null,
      })),
    });
  }
  return { tools, refused, freed };
}

/** What {@linkcode unseenTools} compares the effects against. */
export interface SeenChoices {
  /** The choice leaf's tools. */
  tools: ChoiceTool[];
  /** Tools refused for want of evidence. */
  refused: { tool: string }[];
}

/**
 * The state-changing tools the effects know that training never made (and
 * that were not refused for want of evidence): a new conversation may need
 * one, and each argument of it is checked by name (see the IR's
 * `unseen_tools`).
 *
 * @param effects Tool effects.
 * @param seen The choice leaf's tools and the tools refused.
 * @returns The tools with their effects, by name.
 */
export function unseenTools(
  effects: Effects,
  seen: SeenChoices,
): { tool: string; effect: string }[] {
  const { tools, refused } = seen;
  const known = new Set([
    ...tools.map((t) => t.tool),
    ...refused.map((r) => r.tool),
  ]);
  return Object.keys(effects).sort()
    .filter((t) => effects[t] !== "read" && !known.has(t))
    .map((tool) => ({ tool, effect: effects[tool] }));
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/**
 * The choice leaf's signature (none without state-changing tools).
 *
 * @param tools The leaf's tools.
 * @param unseen Tools training never made.
 * @returns Signature id → signature.
 */
export function choiceSignatures(
  tools: ChoiceTool[],
  unseen: { tool: string }[],
): Record<string, Signature> {
  const signatures: Record<string, Signature> = {};
  if (tools.length) {
    signatures[CHOICE_SIGNATURE] = {
      id: CHOICE_SIGNATURE,
      kind: "choice",
      inputs: {
        conversation: {
          type: "object",
          description: "user messages and calls so far",
        },
        candidates: {
          type: "object",
          description: "tool → argument → allowed values",
        },
      },
      outputs: {
        tool: {
          type: "string",
          enum: [...tools, ...unseen].map((t) => t.tool),
        },
        arguments: {
          type: "object",
          description: "every value from its candidates",
        },
      },
      instructions:
        "Pick the state-changing call the conversation asks for; every argument value must be one of its candidates.",
    };
  }
  return signatures;
}

/**
 * An argument of a tool training never made, as the choice leaf checks it:
 * the union of the sources of the same-named arguments of the tools
 * training made.
 *
 * @param tools The choice leaf's tools.
 * @param path An argument path.
 * @returns The argument (sources null: no tool restricts one so named).
 */
export function sameNamedArg(
  tools: readonly ChoiceTool[],
  path: string,
): BoundArg {
  const same = tools.flatMap((t) =>
    t.args.filter((a) => a.path === path && a.sources !== null)
  );
  const seen = new Set<string>();
  const sources = same.flatMap((a) => a.sources!).filter((s) => {
    const k = canonicalJson(s);
    return seen.has(k) ? false : (seen.add(k), true);
  });
  return { path, sources: same.length ? sources : null };
}
