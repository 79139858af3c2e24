/**
 * The behavior package, on its own: the record and its IR
 * ({@linkcode BehaviorPackage}, {@linkcode BehaviorIr}), the contract
 * every form's node kinds keep ({@linkcode NodeKind}, checked by
 * {@linkcode checkStructure}), signing and trusting a package
 * ({@linkcode signPackage}, {@linkcode checkTrust}), its digest and its
 * compile summary ({@linkcode summarizePackage}). Nothing here compiles,
 * runs or knows a form: the node kinds are the forms' own, so reading,
 * checking, verifying and explaining a package (`loadPackage`,
 * `validatePackage`, `verifyPackage`, `explainPackage`) are on `./forms`.
 *
 * @module
 */
export type { BehaviorPackage } from "./package.ts";
export type { AppliesTo } from "./applies_to.ts";
export type {
  BehaviorIr,
  CompiledBehavior,
  IrNode,
  NodeProvenance,
  Signature,
  SignatureField,
} from "./ir.ts";
export { type NodeKind, NodeKinds, type StructureScope } from "./node_kind.ts";
export { checkStructure } from "./structure_check.ts";
export type { GeneralPath, Source } from "./source.ts";
export type { Candidate, Evidence } from "./candidate.ts";
export type { Effects, EffectSource } from "./tool_effects.ts";
export type { SelfValidation, VerificationReport } from "./verification.ts";
export { PackageError } from "./package_error.ts";
export {
  checkTrust,
  type Ed25519Jwk,
  generateSigningKey,
  importSigningKey,
  packageDigest,
  type PackageSignature,
  type SignatureState,
  type SignedPackage,
  type SigningKey,
  signPackage,
  UntrustedPackageError,
} from "./package_signature.ts";
export { summarizePackage } from "./summary.ts";
export { EmptyPackageError } from "./empty_package.ts";
