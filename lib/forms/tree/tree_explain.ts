/**
 * A tree package in the words of the person who recorded the sessions (a
 * Claude Code user, say), not the compiler's ({@linkcode explainTree}):
 * which steps run without the model, which need it, and why, step by step
 * in the order they run. `explain` prints this first (`Form.explain`); the
 * compiler's view (grades, evidence, candidates) follows it.
 *
 * @module
 */
import type { BehaviorPackage } from "../../package/package.ts";
import type { ArgExpr, TreeNode } from "./tree_nodes.ts";

/** A store, variable or input path as a person reads it. */
function origin(
  path: string,
  by: Map<string, string>,
  pkg: BehaviorPackage,
): string {
  const head = path.split(/[.[~]/)[0];
  if (head === "input") {
    const rest = path.slice("input.".length);
    return /^(text|user|latest)\b/.test(rest)
      ? "your request"
      : rest === "cwd"
      ? "the working folder"
      : `the run's input (${rest})`;
  }
  const maker = by.get(head);
  if (maker) {
    const n = pkg.ir.nodes[maker] as TreeNode | undefined;
    if (n?.kind === "predict") return "the model";
    if (n?.kind === "action") {
      // `list[$sel]`: the item of a list that a model leaf picks.
      const picked = [...path.matchAll(/\[\$([^\]]+)\]/g)].some((m) =>
        pkg.ir.nodes[by.get(m[1]) ?? ""]?.kind === "predict"
      );
      return picked
        ? `the item the model picks from what ${n.tool} returned`
        : `what ${n.tool} returned`;
    }
  }
  return path;
}

function argText(
  name: string,
  e: ArgExpr,
  by: Map<string, string>,
  pkg: BehaviorPackage,
): { text: string; model: boolean } {
  if ("const" in e) {
    return {
      text: `${name} is always ${JSON.stringify(e.const)}`,
      model: false,
    };
  }
  if ("ref" in e) {
    const from = origin(e.ref, by, pkg);
    return from === "the model"
      ? { text: `the model writes ${name}`, model: true }
      : { text: `${name} comes from ${from}`, model: from.includes("model") };
  }
  const refs = [...e.template.matchAll(/\$ref\(([^)]*)\)/g)].map((m) =>
    origin(m[1], by, pkg)
  );
  return {
    text: `${name} is built from ${[...new Set(refs)].join(" and ")}`,
    model: refs.includes("the model"),
  };
}

/** Why a leaf is the model's, from the evidence behind it. */
function leafWhy(pkg: BehaviorPackage, nodeId: string): string {
  const p = pkg.provenance.find((x) => x.node_id === nodeId);
  const cands = pkg.candidates.filter((c) =>
    p?.candidate_ids.includes(c.candidate_id)
  );
  const same = cands.filter((c) =>
    c.type === "constant" && c.evidence.support === c.evidence.applicable
  );
  if (same.length && same.length === cands.length) {
    const values = same.map((c) =>
      JSON.stringify((c.claim as { value?: unknown }).value)
    );
    return `every session used the same value (${values.join(", ")}), but ${
      same[0].evidence.applicable
    } sessions are too few to fix it without the model; record more sessions of the task`;
  }
  return "the sessions used values here that nothing recorded before explains (not your request, not an earlier result)";
}

/** Which node writes each store and variable. */
function makers(pkg: BehaviorPackage): Map<string, string> {
  const by = new Map<string, string>();
  for (const n of Object.values(pkg.ir.nodes) as TreeNode[]) {
    if (n.kind === "action") by.set(n.store, n.id);
    if (n.kind === "predict") {
      for (const v of Object.values(n.outputs)) by.set(v, n.id);
    }
  }
  return by;
}

/**
 * A tree package in plain words, a line per step in the order they run.
 *
 * @param pkg The package.
 * @returns The lines (after the heading `explain` writes).
 */
export function explainTree(pkg: BehaviorPackage): string[] {
  const by = makers(pkg);
  const out: string[] = [];
  let step = 0;
  const seen = new Set<string>();
  const visit = (id: string, depth: number) => {
    if (seen.has(id)) return;
    seen.add(id);
    const n = pkg.ir.nodes[id] as TreeNode | undefined;
    if (!n) return;
    const pad = "  ".repeat(depth + 1);
    switch (n.kind) {
      case "sequence":
        n.children.forEach((c) => visit(c, depth));
        return;
      case "action": {
        const args = Object.entries(n.args).map(([k, v]) =>
          argText(k, v, by, pkg)
        );
        const model = args.some((a) => a.model);
        out.push(
          `${pad}${++step}. ${n.tool}: ${
            model
              ? "needs the model for part of its arguments"
              : "runs without the model"
          }${args.length ? ` (${args.map((a) => a.text).join("; ")})` : ""}${
            n.recovery
              ? `; tried again up to ${n.recovery.max_attempts} times on ${
                n.recovery.retry_on.join(", ")
              }`
              : ""
          }`,
        );
        return;
      }
      case "predict": {
        const sig = pkg.signatures[n.signature];
        const within = n.decides?.within ?? {};
        for (const o of Object.keys(within)) {
          const arg = n.decides?.args?.[o] ?? o;
          const what = (sig?.outputs[o]?.description ?? "")
            .replace(/^part of \S+ argument \S+: /, "");
          out.push(
            `${pad}- the model writes a part of ${arg}${
              what ? ` (${what})` : ""
            }: nothing recorded before the call says which; the rest of ${arg} is built from earlier results`,
          );
        }
        const whole = Object.keys(sig?.outputs ?? n.outputs).filter((o) =>
          !(o in within)
        );
        if (!whole.length) return;
        const outs = whole.join(", ");
        const why = n.decides?.kind === "index"
          ? "which item of the list the request means differed between the sessions"
          : n.decides?.kind === "arm"
          ? "which way the sessions went here differed, and nothing recorded decides it"
          : leafWhy(pkg, n.id);
        out.push(`${pad}- the model decides ${outs}: ${why}`);
        return;
      }
      case "branch": {
        const other = pkg.ir.nodes[n.otherwise] as TreeNode | undefined;
        const on = origin(n.on, by, pkg);
        out.push(
          `${pad}- then it goes one of ${n.cases.length} recorded ways, as ${
            on === "the model" ? "the model decided" : `${on} says`
          }${
            other?.kind === "stop"
              ? "; any other way, it stops rather than guess"
              : ""
          }:`,
        );
        for (const c of n.cases) visit(c.then, depth + 1);
        if (other?.kind !== "stop") visit(n.otherwise, depth + 1);
        return;
      }
      case "react":
        out.push(
          `${pad}- the model works on its own here with ${
            n.tools.join(", ")
          } (at most ${n.max_steps} calls): the sessions did different things at this point`,
        );
        return;
      case "stop":
        out.push(`${pad}- it stops: ${n.reason}`);
        return;
      default:
        return;
    }
  };
  visit(pkg.ir.root, 0);
  return out;
}
