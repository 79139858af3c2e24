/**
 * The package record: one portable, versioned JSON document
 * (`harness.package.v1`) holding a compiled behavior of either form, its
 * verification, candidates and evidence. The compiler assembles it
 * (`lib/compiler/build_package.ts`); `lib/forms/validate_package.ts` reads and checks it.
 *
 * @module
 */
import type { Candidate } from "./candidate.ts";
import type { Effects, EffectSource } from "./tool_effects.ts";
import type { BehaviorIr, NodeProvenance, Signature } from "./ir.ts";
import type { VerificationReport } from "./verification.ts";
import type { AppliesTo } from "./applies_to.ts";

/** Version of the package format. */
export const PACKAGE_VERSION = "harness.package.v1";

/** The portable behavior package. */
export interface BehaviorPackage {
  /** `harness.package.v1`. */
  schema_version: string;
  /** What it is and what it needs. */
  manifest: {
    name: string;
    version: string;
    task_family: string;
    capture_fidelity: string;
    compiler_model_id: string | null;
    required_capabilities: string[];
    effects: Effects;
    /**
     * Where each tool's effect came from (`override`, `annotation`,
     * `schema`, `domain`, `host`, `inferred`, `unknown`); always written,
     * absent from packages made before it existed.
     */
    effects_source?: Record<string, EffectSource>;
    episodes: number;
    promoted_to_e4: boolean;
    /**
     * Why the package must not be served (`serve --package` refuses it):
     * its replay of its own training sessions was not clean. Absent when
     * it was (and from packages made before the field existed).
     */
    not_servable?: string;
  };
  /**
   * Which conversations it applies to when served at the model API (the
   * rule from its training sessions' openings, `applies_to.ts`); absent
   * from packages made before it existed (they apply wherever their tools
   * fit).
   */
  applies_to?: AppliesTo;
  /** The behavior IR. */
  ir: BehaviorIr;
  /** Residual leaf signatures. */
  signatures: Record<string, Signature>;
  /** Why each node exists. */
  provenance: NodeProvenance[];
  /** The candidates (episode lists cut to 10 ids). */
  candidates: Candidate[];
  /** The verification report. */
  verification: VerificationReport;
  /** Evidence: each source episode's digest, and a digest over them. */
  sources: {
    digest: string;
    episodes: { episode_id: string; source_digest: string | null }[];
  };
  /** `sha256:` over the canonical package without this field. */
  digest: string;
}
