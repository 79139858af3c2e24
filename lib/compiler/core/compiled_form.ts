/**
 * What one form's compile pipeline gives the packaging step.
 *
 * @module
 */
import type { Candidate } from "../../package/candidate.ts";
import type { CompiledBehavior } from "../../package/ir.ts";
import type { VerificationReport } from "../../package/verification.ts";

/** What one form's pipeline gives `buildPackage`. */
export interface CompiledForm {
  /** The compiled behavior. */
  compiled: CompiledBehavior;
  /** Its candidates (the evidence behind its nodes). */
  candidates: Candidate[];
  /** Its verification. */
  verification: VerificationReport;
}
