/**
 * What the package report (the explain view) shows, gathered from a
 * behavior package: every node in tree order with its depth, children,
 * one-line description, grade, evidence counts, why it exists, example
 * episodes and the candidates behind it; the manifest and the verification.
 *
 * @module
 */
import type { BehaviorPackage } from "../package/package.ts";
import { describeNode, nodeChildren } from "../forms/explain_package.ts";

/** A candidate as the report shows it. */
export interface PackageReportCandidate {
  /** Candidate id. */
  id: string;
  /** Fact type (`fixed_action`, `dataflow`, …). */
  type: string;
  /** Its key without the type, joined with spaces. */
  key: string;
  /** The claim, as JSON text. */
  claim: string;
  /** Grade. */
  grade: string;
  /** `proposed`, `contested`, … */
  status: string;
  /** Supporting episodes (count). */
  support: number;
  /** Applicable episodes (count). */
  applicable: number;
  /** Distinct values seen. */
  variety: number;
}

/** A node as the report shows it. */
export interface PackageReportNode {
  /** Node id. */
  id: string;
  /** IR kind. */
  kind: string;
  /** Depth in the tree (root 0). */
  depth: number;
  /** Child ids, in order. */
  children: string[];
  /** One line on what it does. */
  text: string;
  /** Grade, or null for structure without provenance. */
  grade: string | null;
  /** Supporting episodes (count). */
  support: number;
  /** Applicable episodes (count). */
  applicable: number;
  /** Counterexamples (count). */
  counterexamples: number;
  /** Why the node exists. */
  why: string;
  /** Example supporting episodes (up to 10). */
  episodes: string[];
  /** The candidates behind it. */
  candidates: PackageReportCandidate[];
  /** Residual leaf instructions, for model nodes. */
  instructions: string | null;
}

/** Everything the package report draws. */
export interface PackageReportData {
  /** Package name and version. */
  name: string;
  /** Version. */
  version: string;
  /** Package digest. */
  digest: string;
  /** Episodes compiled. */
  episodes: number;
  /** Capture fidelity. */
  fidelity: string;
  /** Capabilities it needs. */
  capabilities: string[];
  /** Verification. */
  verification: {
    structural_ok: boolean;
    replay_passed: number;
    replay_checks: number;
    episodes_replayed: number;
    episodes_clean: number;
    promoted_to_e4: boolean;
    problems: string[];
  };
  /** Nodes in tree order (unreachable ones last, at depth 0). */
  nodes: PackageReportNode[];
}

/**
 * Gather the report's data from a package.
 *
 * @param pkg The package.
 * @returns The data.
 */
export function packageReportData(pkg: BehaviorPackage): PackageReportData {
  const prov = new Map(pkg.provenance.map((p) => [p.node_id, p]));
  const cands = new Map(pkg.candidates.map((c) => [c.candidate_id, c]));
  const nodes: PackageReportNode[] = [];
  const seen = new Set<string>();
  const visit = (id: string, depth: number) => {
    const n = pkg.ir.nodes[id];
    if (!n || seen.has(id)) return;
    seen.add(id);
    const p = prov.get(id);
    const children = nodeChildren(n).filter((c) => pkg.ir.nodes[c]);
    const sig = typeof n.signature === "string"
      ? pkg.signatures[n.signature]
      : undefined;
    nodes.push({
      id,
      kind: n.kind,
      depth,
      children,
      text: describeNode(n),
      grade: p?.grade ?? null,
      support: p?.support ?? 0,
      applicable: p?.applicable ?? 0,
      counterexamples: p?.counterexamples ?? 0,
      why: p?.why ?? "",
      episodes: p?.episodes ?? [],
      candidates: (p?.candidate_ids ?? []).flatMap((cid) => {
        const c = cands.get(cid);
        return c
          ? [{
            id: c.candidate_id,
            type: c.type,
            key: c.key.slice(1).join(" "),
            claim: JSON.stringify(c.claim),
            grade: c.grade,
            status: c.status,
            support: c.evidence.support,
            applicable: c.evidence.applicable,
            variety: c.evidence.variety,
          }]
          : [];
      }),
      instructions: sig?.instructions ?? null,
    });
    for (const c of children) visit(c, depth + 1);
  };
  visit(pkg.ir.root, 0);
  for (const id of Object.keys(pkg.ir.nodes).sort()) visit(id, 0);
  const v = pkg.verification;
  return {
    name: pkg.manifest.name,
    version: pkg.manifest.version,
    digest: pkg.digest,
    episodes: pkg.manifest.episodes,
    fidelity: pkg.manifest.capture_fidelity,
    capabilities: pkg.manifest.required_capabilities,
    verification: {
      structural_ok: v.structural_ok,
      replay_passed: v.replay_passed,
      replay_checks: v.replay_checks,
      episodes_replayed: v.episodes_replayed,
      episodes_clean: v.episodes_clean,
      promoted_to_e4: pkg.manifest.promoted_to_e4,
      problems: [...v.structural_problems, ...v.problems].slice(0, 50),
    },
    nodes,
  };
}
