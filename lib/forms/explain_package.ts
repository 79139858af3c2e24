/**
 * Explain mode ({@linkcode explainPackage}): the compile summary, the
 * package in plain words (its form's `explain`), then every node in tree
 * order with why it exists (the evidence and episodes behind it), each
 * node described by its kind ({@linkcode describeNode}, in the table's
 * node kinds).
 *
 * @module
 */
import type { BehaviorPackage } from "../package/package.ts";
import type { IrNode } from "../package/ir.ts";
import { summarizePackage } from "../package/summary.ts";
import { FORM_TABLE, type FormTable } from "./form_table.ts";

/**
 * A one-line description of a node, in its kind's words.
 *
 * @param n The node.
 * @param table The forms whose node kinds it may be.
 * @returns Text.
 */
export function describeNode(
  n: IrNode,
  table: FormTable = FORM_TABLE,
): string {
  return table.kinds.describe(n);
}

/**
 * A node's children in tree order (a sequence's steps, a branch's arms
 * then its `otherwise`, an agent's lookups then its choice: its kind's).
 *
 * @param n The node.
 * @param table The forms whose node kinds it may be.
 * @returns Child node ids.
 */
export function nodeChildren(
  n: IrNode,
  table: FormTable = FORM_TABLE,
): string[] {
  return [...table.kinds.children(n)];
}

/**
 * The package in plain words: which steps run without the model, which
 * need it, and why (its form's `explain`).
 *
 * @param pkg The package.
 * @param table The forms it may be of.
 * @returns The lines.
 */
export function plainExplanation(
  pkg: BehaviorPackage,
  table: FormTable = FORM_TABLE,
): string[] {
  const n = pkg.manifest.episodes ?? pkg.provenance.length;
  const head =
    `What ${pkg.manifest.name} does, learned from ${n} recorded session${
      n === 1 ? "" : "s"
    }:`;
  const form = table.find(pkg.ir);
  if (!form) {
    const root = pkg.ir.nodes[pkg.ir.root];
    return [
      head,
      `  nothing: its root is ${
        root ? `a ${root.kind} node` : "missing"
      }, which no form runs`,
    ];
  }
  return [head, ...form.explain(pkg)];
}

/**
 * Explain mode: the package in plain words (which steps run without the
 * model, which need it, and why), then every node in tree order with why
 * it exists.
 *
 * @param pkg The package.
 * @param table The forms it may be of.
 * @returns Text.
 */
export function explainPackage(
  pkg: BehaviorPackage,
  table: FormTable = FORM_TABLE,
): string {
  const prov = new Map(pkg.provenance.map((p) => [p.node_id, p]));
  const cands = new Map(pkg.candidates.map((c) => [c.candidate_id, c]));
  const lines: string[] = [
    summarizePackage(pkg),
    "",
    ...plainExplanation(pkg, table),
    "",
    "In the compiler's terms (grades E0–E4: how strong the evidence is; residual: left to the model):",
  ];
  const seen = new Set<string>();
  const visit = (id: string, depth: number) => {
    if (seen.has(id)) return;
    seen.add(id);
    const n = pkg.ir.nodes[id];
    const kind = table.kinds.get(n.kind);
    const p = prov.get(id);
    const pad = "  ".repeat(depth);
    lines.push(
      `${pad}${id} [${n.kind}${p ? `, ${p.grade}` : ""}] ${
        describeNode(n, table)
      }`,
    );
    if (p && !kind?.ordersOnly) {
      lines.push(`${pad}  why: ${p.why}`);
      lines.push(
        `${pad}  evidence: ${p.support} supporting of ${p.applicable} applicable episodes, ${p.counterexamples} counterexamples; e.g. ${
          p.episodes.slice(0, 3).join(", ")
        }`,
      );
      for (const cid of p.candidate_ids) {
        const c = cands.get(cid);
        if (!c) continue;
        lines.push(
          `${pad}  - ${c.type} ${c.key.slice(1).join(" ")}: ${
            JSON.stringify(c.claim)
          } — ${c.grade}${
            c.status === "contested" ? " (contested)" : ""
          }, support ${c.evidence.support}/${c.evidence.applicable}, variety ${c.evidence.variety}${
            c.contract_sources.length
              ? `, contracts ${c.contract_sources.join(", ")}`
              : ""
          }`,
        );
      }
    }
    for (const d of kind?.details?.(n, pkg.signatures) ?? []) {
      lines.push(`${pad}  ${d}`);
    }
    nodeChildren(n, table).forEach((c) => visit(c, depth + 1));
  };
  visit(pkg.ir.root, 0);
  return lines.join("\n");
}
