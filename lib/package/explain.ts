/**
 * Human renderings of a package: the compile summary, and explain mode
 * (per node, why it exists: the evidence and episodes behind it).
 *
 * @module
 */
import { describeAppliesTo } from "./applies_to.ts";
import type { BehaviorPackage } from "./package.ts";
import type { ArgExpr, IrNode } from "./ir.ts";
import { describeSource } from "./source.ts";
import { plainExplanation } from "./explain_plain.ts";

function arg(e: ArgExpr): string {
  if ("const" in e) return JSON.stringify(e.const);
  if ("ref" in e) return `ref ${e.ref}`;
  return `template "${e.template}"`;
}

/**
 * A one-line description of a node.
 *
 * @param n The node.
 * @returns Text.
 */
export function describeNode(n: IrNode): string {
  switch (n.kind) {
    case "sequence":
      return `sequence of ${n.children.length}`;
    case "action":
      return `call ${n.tool}(${
        Object.entries(n.args).map(([k, v]) => `${k} = ${arg(v)}`).join(", ")
      }) → ${n.store}` +
        (n.recovery
          ? `; retry on ${
            n.recovery.retry_on.join(", ")
          } up to ${n.recovery.max_attempts} attempts`
          : "") +
        (n.effect !== "read" ? ` [${n.effect}]` : "");
    case "branch":
      return `branch on ${n.on}: ${
        n.cases.map((c) => `${JSON.stringify(c.equals)} → ${c.then}`).join(", ")
      }; otherwise ${n.otherwise}`;
    case "predict":
      return `model predicts ${
        Object.entries(n.outputs).map(([k, v]) => `${k} → ${v}`).join(", ")
      } (${n.signature}) from ${Object.values(n.inputs).join(", ")}`;
    case "react":
      return `model acts with ${
        n.tools.join(", ")
      } for at most ${n.max_steps} steps (${n.signature})`;
    case "stop":
      return `stop: ${n.reason}`;
    case "agent":
      return `conversation: lookups ${
        n.lookups.join(", ") || "(none)"
      } as soon as their arguments bind (fan-out cap ${n.fanout}); state changes through ${
        n.choice ?? "(no choice leaf)"
      }`;
    case "lookup":
      return `look up ${n.tool}(${
        n.args.map((a) =>
          `${a.path} ∈ ${(a.sources ?? []).map(describeSource).join(" ∪ ")}`
        ).join(", ")
      })`;
    case "choice":
      return `model chooses one of ${
        n.tools.map((t) => t.tool).join(", ")
      }, every argument from its candidates${
        n.unseen_tools?.length
          ? `, or by argument name: ${
            n.unseen_tools.map((t) => t.tool).join(", ")
          }`
          : ""
      } (${n.signature})`;
  }
}

/**
 * A node's children in tree order: a sequence's steps, a branch's arms then
 * its `otherwise`, an agent's lookups then its choice.
 *
 * @param n The node.
 * @returns Child node ids.
 */
export function nodeChildren(n: IrNode): string[] {
  switch (n.kind) {
    case "sequence":
      return n.children;
    case "branch":
      return [...n.cases.map((c) => c.then), n.otherwise];
    case "agent":
      return [...n.lookups, ...(n.choice ? [n.choice] : [])];
    default:
      return [];
  }
}

/**
 * The compile summary: nodes by kind, grades, residual leaves, replay.
 *
 * @param pkg The package.
 * @returns Text.
 */
export function summarizePackage(pkg: BehaviorPackage): string {
  const kinds = new Map<string, number>();
  for (const n of Object.values(pkg.ir.nodes)) {
    kinds.set(n.kind, (kinds.get(n.kind) ?? 0) + 1);
  }
  const grades = new Map<string, number>();
  for (const p of pkg.provenance) {
    grades.set(p.grade, (grades.get(p.grade) ?? 0) + 1);
  }
  const v = pkg.verification;
  const m = pkg.manifest;
  return [
    `package ${m.name} ${m.version} (${pkg.schema_version}), ${m.episodes} episodes, fidelity ${m.capture_fidelity}`,
    `  digest        ${pkg.digest}`,
    `  nodes         ${
      [...kinds].sort().map(([k, n]) => `${n} ${k}`).join(", ")
    }`,
    `  grades        ${
      [...grades].sort().map(([g, n]) => `${n} ${g}`).join(", ")
    }`,
    `  residual      ${Object.keys(pkg.signatures).length} leaves: ${
      Object.keys(pkg.signatures).join(", ") || "none"
    }`,
    `  capabilities  ${m.required_capabilities.join(", ")}`,
    `  verification  structure ${
      v.structural_ok ? "ok" : "BROKEN"
    }; replay ${v.replay_passed}/${v.replay_checks} checks passed over ${v.episodes_replayed} episodes (${v.episodes_clean} clean)${
      m.promoted_to_e4 ? "; nodes promoted to E4" : ""
    }`,
    ...servingLines(pkg),
    ...validationLines(v.validation),
    ...tuningLines(v.tuning),
    ...droppedLines(v.dropped),
    ...v.structural_problems.slice(0, 5).map((p) => `    structure: ${p}`),
    ...v.problems.slice(0, 5).map((p) => `    replay: ${p}`),
  ].join("\n");
}

/** Whether `serve --package` serves it, and to which conversations. */
function servingLines(pkg: BehaviorPackage): string[] {
  const why = pkg.manifest.not_servable;
  return [
    why
      ? `  serving       NOT SERVABLE (serve --package refuses it): ${why}`
      : `  serving       applies to ${describeAppliesTo(pkg.applies_to)}`,
  ];
}

function pointText(p: Record<string, number | undefined>): string {
  const parts = Object.entries(p).map(([k, v]) => `${k} ${v}`);
  return parts.length ? parts.join(", ") : "the defaults";
}

function droppedLines(
  dropped: BehaviorPackage["verification"]["dropped"],
): string[] {
  if (!dropped?.length) return [];
  return [
    `  left out      ${dropped.length} node${dropped.length === 1 ? "" : "s"}`,
    ...dropped.slice(0, 5).map((d) => `    ${d.node}: ${d.why}`),
    ...(dropped.length > 5
      ? [
        `    (${dropped.length - 5} more in the package, verification.dropped)`,
      ]
      : []),
  ];
}

function tuningLines(
  tuning: BehaviorPackage["verification"]["tuning"],
): string[] {
  if (!tuning) return [];
  const score = (t: (typeof tuning.tried)[number]) =>
    `${t.served} of ${t.calls} served, ${t.extra_lookups} extra lookups, ${t.stopped} stopped`;
  return [
    `  tuning        ${
      pointText({ ...tuning.picked })
    } (cross-validated, ${tuning.tried.length} points tried${
      tuning.fixed.length
        ? `; fixed by the caller: ${tuning.fixed.join(", ")}`
        : ""
    })`,
    ...tuning.tried.map((t) =>
      `    ${pointText({ ...t.params })}: ${score(t)}`
    ),
  ];
}

function validationLines(
  val: BehaviorPackage["verification"]["validation"],
): string[] {
  if (val === undefined) return [];
  if (val === null) {
    return [
      "  validation    too few training episodes to cross-validate (needs 8)",
    ];
  }
  const pct = val.calls ? Math.round((100 * val.served) / val.calls) : 0;
  const head =
    `  validation    ${val.verdict}: on ${val.episodes} training episodes, each held out once (${val.folds} folds, each built from at least ${val.fit_episodes}), ${val.served} of ${val.calls} calls (${pct}%) without the model, ${
      (val.extra_lookups / val.episodes).toFixed(2)
    } extra lookups per episode, ${val.stopped} conversation${
      val.stopped === 1 ? "" : "s"
    } stopped`;
  return [
    head,
    ...(val.verdict === "saves nothing"
      ? ["    the lookups saved nothing there: the package keeps none"]
      : []),
    ...val.stop_reasons.map((r) => `    stopped: ${r}`),
  ];
}

/**
 * Explain mode: the package in plain words (which steps run without the
 * model, which need it, and why), then every node in tree order with why
 * it exists.
 *
 * @param pkg The package.
 * @returns Text.
 */
export function explainPackage(pkg: BehaviorPackage): string {
  const prov = new Map(pkg.provenance.map((p) => [p.node_id, p]));
  const cands = new Map(pkg.candidates.map((c) => [c.candidate_id, c]));
  const lines: string[] = [
    summarizePackage(pkg),
    "",
    ...plainExplanation(pkg),
    "",
    "In the compiler's terms (grades E0–E4: how strong the evidence is; residual: left to the model):",
  ];
  const seen = new Set<string>();
  const visit = (id: string, depth: number) => {
    if (seen.has(id)) return;
    seen.add(id);
    const n = pkg.ir.nodes[id];
    const p = prov.get(id);
    const pad = "  ".repeat(depth);
    lines.push(
      `${pad}${id} [${n.kind}${p ? `, ${p.grade}` : ""}] ${describeNode(n)}`,
    );
    if (p && n.kind !== "sequence") {
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
    if (n.kind === "predict") {
      const sig = pkg.signatures[n.signature];
      if (sig) lines.push(`${pad}  signature: ${sig.instructions}`);
    }
    nodeChildren(n).forEach((c) => visit(c, depth + 1));
  };
  visit(pkg.ir.root, 0);
  return lines.join("\n");
}
