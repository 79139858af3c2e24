/**
 * The behavior compiler: {@linkcode compileBehavior} turns captured
 * episodes into a portable package of either form (a skeleton tree, or the
 * agent form for conversations), with the tool effects it used and its
 * verification; {@linkcode explainPackage} renders a package for people and
 * {@linkcode describeEffects} the tool effects a compilation used.
 *
 * The package (its IR, record, verification report) is `lib/package/`;
 * each form's pipeline, engine and drivers are `lib/forms/tree/` and
 * `lib/forms/agent/`, chosen through the table of forms
 * (`lib/forms/form_table.ts`). The IR's types are here because a package
 * carries them (each form's node types are its own, from `./forms`).
 *
 * Existing τ-bench, τ²-bench and OpenAI-message trajectories become captures
 * with `ingest.ts import` (the importers in `lib/importers/` are not a
 * library face).
 *
 * @module
 */
export {
  compileBehavior,
  type CompileOptions,
  type CompileResult,
} from "./compile_behavior.ts";
export type { BehaviorPackage } from "../package/package.ts";
export type {
  BehaviorIr,
  IrNode,
  NodeProvenance,
  Signature,
  SignatureField,
} from "../package/ir.ts";
export type {
  AgentCompileOptions,
  AgentTuning,
  AnyNode,
  ArgExpr,
  BoundArg,
  ChoiceTool,
  Decides,
  FormName,
  FormOptions,
  Recovery,
  TreeCompileOptions,
} from "../forms/mod.ts";
export type { GeneralPath, Source } from "../package/source.ts";
export type { Candidate, Evidence } from "../package/candidate.ts";
export type {
  SelfValidation,
  VerificationReport,
} from "../package/verification.ts";
export type { Effects } from "../package/tool_effects.ts";
export { describeEffects, type EffectsResolution } from "./effects.ts";
export { type EffectSource } from "../package/tool_effects.ts";
export { explainPackage } from "../forms/explain_package.ts";
export { EmptyPackageError } from "../package/empty_package.ts";
