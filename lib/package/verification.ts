/**
 * What verification reports, for any form: the report, and the promotion
 * of a cleanly replayed behavior to E4. The structural check is in
 * `structure_check.ts`; replay itself is per form: the tree form's in
 * `lib/forms/tree/verify.ts`, the agent form's in
 * `lib/forms/agent/agent_verify.ts`.
 *
 * @module
 */
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
