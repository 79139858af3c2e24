/**
 * A consolidated claim and its evidence, as a package records it: the tree
 * form grades facts into candidates (`lib/forms/tree/consolidate.ts`), the
 * agent form turns its learned bindings into candidates
 * (`lib/forms/agent/agent_verify.ts`).
 *
 * @module
 */

/** Evidence of a candidate. */
export interface Evidence {
  /** Episodes where the claim applies. */
  applicable: number;
  /** Episodes that support it. */
  support: number;
  /** Episodes that contradict it. */
  counterexamples: number;
  /** Supporting episode ids (sorted). */
  episodes: string[];
  /** Supporting episodes that succeeded. */
  success_support: number;
  /** Supporting episodes that failed. */
  fail_support: number;
  /** Distinct instance values among the supporters. */
  variety: number;
}

/** A consolidated claim. */
export interface Candidate {
  /** Stable id: `c_<type>_<8 hex of the key>`. */
  candidate_id: string;
  /** Atom type. */
  type: string;
  /** Key parts. */
  key: string[];
  /** The claim. */
  claim: Record<string, unknown>;
  /** Evidence. */
  evidence: Evidence;
  /** `E0` … `E3` (E4 only after replay). */
  grade: string;
  /** `proposed`, `contested`. */
  status: string;
  /** Contract ids behind an E3. */
  contract_sources: string[];
}
