/**
 * The compile summary of a package ({@linkcode summarizePackage}): nodes
 * by kind, grades, residual leaves, verification, serving, validation and
 * tuning, whichever form it is. Explain mode (per node, why it exists) is
 * `explainPackage` in `lib/forms/explain_package.ts`: it needs the forms'
 * node kinds.
 *
 * @module
 */
import { describeAppliesTo } from "./applies_to.ts";
import type { BehaviorPackage } from "./package.ts";

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
