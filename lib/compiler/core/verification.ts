/**
 * What verification reports, for either form: the report, the structural
 * check (refs resolve to stores written earlier, tools exist, no
 * unreachable nodes, signatures typed), and the promotion of a cleanly
 * replayed behavior to E4. Replay itself is per form: the tree form's in
 * `../tree/verify.ts`, the agent form's in `../agent/agent_verify.ts`.
 *
 * @module
 */
import { parsePath } from "../../lineage/paths.ts";
import type { CompiledBehavior } from "./ir.ts";

/** The verification report. */
export interface VerificationReport {
  /** Structure is valid. */
  structural_ok: boolean;
  /** What is wrong with the structure. */
  structural_problems: string[];
  /** Replay checks made. */
  replay_checks: number;
  /** Replay checks passed. */
  replay_passed: number;
  /** Mismatches, each naming the episode and step. */
  problems: string[];
  /** Episodes replayed. */
  episodes_replayed: number;
  /** Episodes replayed without a mismatch. */
  episodes_clean: number;
  /**
   * Agent form: the package cross-validated on its own training data
   * (`agent/self_validation.ts`); null when there were too few episodes to
   * hold any out. Absent for the tree form.
   */
  validation?: SelfValidation | null;
  /**
   * Agent form: the tuning parameters chosen by that cross-validation
   * (`agent/self_tuning.ts`); null when there were too few episodes or
   * the caller fixed every parameter. Absent for the tree form.
   */
  tuning?: {
    /**
     * The parameters the package was built with, where they differ from
     * the defaults (`min_yield`, `extra_lookup_budget`, `adjacent_share`,
     * `speculative_coverage`, `fanout`).
     */
    picked: Record<string, number>;
    /** Every point tried, in the order tried (the defaults first). */
    tried: {
      /** The parameters that differ from the defaults (empty: the defaults). */
      params: Record<string, number>;
      /** Calls served without the model, over every fold. */
      served: number;
      /** The agent's calls replayed. */
      calls: number;
      /** Extra lookups. */
      extra_lookups: number;
      /** Conversations stopped. */
      stopped: number;
    }[];
    /** Parameters the caller fixed (not tuned). */
    fixed: string[];
  } | null;
  /**
   * Agent form: what the compiler left out and why (lookup nodes that did
   * not pay in training replay, choice tools refused or freed), cut to 200.
   * Absent for the tree form.
   */
  dropped?: {
    /** The node (`lookup_…`) or choice tool (`choice:…`). */
    node: string;
    /** Why, in a sentence. */
    why: string;
  }[];
}

/** What the cross-validation showed. */
export interface SelfValidation {
  /** Folds: each was replayed through a form built from the others. */
  folds: number;
  /** Fewest training episodes a fold's form was built from. */
  fit_episodes: number;
  /** Training episodes held out and replayed (each once). */
  episodes: number;
  /** The agent's calls in them. */
  calls: number;
  /** Of those, calls a lookup had already made (no model call). */
  served: number;
  /** Lookups the episodes did not make between the same writes. */
  extra_lookups: number;
  /** Held-out conversations the choice leaf stopped (a correct call refused). */
  stopped: number;
  /** The first reasons of those stops. */
  stop_reasons: string[];
  /** `pays`, `saves nothing` (no call served) or `stops conversations`. */
  verdict: "pays" | "saves nothing" | "stops conversations";
}

// Over 80 lines: one recursive walk with a case per node kind, carrying the stores in scope.
/**
 * Structural problems of a compiled behavior (empty when sound): refs read
 * stores and variables written earlier on their path, tools are in the
 * capability set, every node is reachable, signatures are typed.
 *
 * @param compiled IR and signatures.
 * @param caps Available tools, or null to skip that check.
 * @returns Problems, one sentence each.
 */
export function checkStructure(
  compiled: Pick<CompiledBehavior, "ir" | "signatures">,
  caps: Set<string> | null,
): string[] {
  const { ir, signatures } = compiled;
  const problems: string[] = [];
  const reached = new Set<string>();
  const written = new Set<string>(["input"]);
  const walk = (id: string, scope: Set<string>): Set<string> => {
    const n = ir.nodes[id];
    if (!n) {
      problems.push(`node ${id} is referenced but missing`);
      return scope;
    }
    reached.add(id);
    const needs = (path: string, where: string) => {
      let first;
      try {
        first = parsePath(path)[0];
      } catch {
        problems.push(`${where}: malformed path ${path}`);
        return;
      }
      const key = first && "key" in first ? first.key : null;
      if (key === null || !scope.has(key)) {
        problems.push(
          `${where}: ${path} reads ${key} before anything writes it`,
        );
      }
      for (const v of path.matchAll(/\[\$([^\]]+)\]/g)) {
        if (!scope.has(v[1])) {
          problems.push(`${where}: ${path} uses $${v[1]} before it is set`);
        }
      }
    };
    switch (n.kind) {
      case "sequence": {
        let s = scope;
        for (const c of n.children) s = walk(c, s);
        return s;
      }
      case "action": {
        if (caps && !caps.has(n.tool)) {
          problems.push(`${id}: tool ${n.tool} is not in the capability set`);
        }
        for (const [arg, e] of Object.entries(n.args)) {
          if ("ref" in e) needs(e.ref, `${id}.${arg}`);
          if ("template" in e) {
            for (const m of e.template.matchAll(/\$ref\(([^)]*)\)/g)) {
              needs(m[1], `${id}.${arg}`);
            }
          }
        }
        return new Set(scope).add(n.store);
      }
      case "predict": {
        const sig = signatures[n.signature];
        if (!sig) problems.push(`${id}: signature ${n.signature} is missing`);
        for (const [name, f] of Object.entries(sig?.outputs ?? {})) {
          if (!f.type) problems.push(`${id}: output ${name} has no type`);
        }
        for (const p of Object.values(n.inputs)) needs(p, `${id} input`);
        const s = new Set(scope);
        for (const v of Object.values(n.outputs)) s.add(v);
        return s;
      }
      case "react":
        if (!signatures[n.signature]) {
          problems.push(`${id}: signature ${n.signature} is missing`);
        }
        return new Set(scope).add(n.store);
      case "branch": {
        needs(n.on, id);
        for (const c of n.cases) walk(c.then, scope);
        walk(n.otherwise, scope);
        return scope; // what the arms write is not visible after the branch
      }
      case "stop":
        return scope;
      case "agent":
        for (const l of n.lookups) walk(l, scope);
        if (n.choice) walk(n.choice, scope);
        return scope;
      case "lookup":
        if (caps && !caps.has(n.tool)) {
          problems.push(`${id}: tool ${n.tool} is not in the capability set`);
        }
        return scope;
      case "choice":
        if (!signatures[n.signature]) {
          problems.push(`${id}: signature ${n.signature} is missing`);
        }
        for (const t of n.tools) {
          if (caps && !caps.has(t.tool)) {
            problems.push(`${id}: tool ${t.tool} is not in the capability set`);
          }
        }
        return scope;
    }
  };
  walk(ir.root, written);
  for (const id of Object.keys(ir.nodes)) {
    if (!reached.has(id)) problems.push(`node ${id} is unreachable`);
  }
  return problems;
}

/**
 * Whether a behavior verified clean: sound structure, and every replay
 * check made (at least one) passed.
 *
 * @param report A verification report.
 * @returns True when clean.
 */
export function verifiedClean(report: VerificationReport): boolean {
  return report.structural_ok && report.replay_checks > 0 &&
    report.replay_passed === report.replay_checks;
}

/**
 * Lift every deterministic node's provenance to E4 when replay was fully
 * clean (residual and structural nodes keep their marks).
 *
 * @param compiled The compiled behavior (changed in place).
 * @param report Its verification report.
 * @returns Whether it was promoted.
 */
export function promoteReplayVerified(
  compiled: CompiledBehavior,
  report: VerificationReport,
): boolean {
  if (!verifiedClean(report)) return false;
  for (const p of compiled.provenance) {
    if (p.grade !== "residual" && p.grade !== "structural") p.grade = "E4";
  }
  return true;
}
