/**
 * The behavior package, on its own: the record and its IR
 * ({@linkcode BehaviorPackage}, {@linkcode BehaviorIr}), reading and
 * checking one ({@linkcode loadPackage}, {@linkcode validatePackage},
 * {@linkcode verifyPackage}), signing and trusting one
 * ({@linkcode signPackage}, {@linkcode checkTrust}), and rendering one for
 * people ({@linkcode explainPackage}). Nothing here compiles or runs a
 * package: that is `./compiler` and `./runtime`.
 *
 * @module
 */
export type { BehaviorPackage } from "./package.ts";
export type { AppliesTo } from "./applies_to.ts";
export type {
  ArgExpr,
  BehaviorIr,
  BoundArg,
  ChoiceTool,
  Decides,
  IrNode,
  NodeProvenance,
  Recovery,
  Signature,
  SignatureField,
} from "./ir.ts";
export type { GeneralPath, Source } from "./source.ts";
export type { Candidate, Evidence } from "./candidate.ts";
export type { Effects, EffectSource } from "./tool_effects.ts";
export type { SelfValidation, VerificationReport } from "./verification.ts";
export { loadPackage, PackageError, validatePackage } from "./load_package.ts";
export {
  type PackageCheck,
  type PackageVerification,
  verifyPackage,
  type VerifyPackageOptions,
} from "./verify_package.ts";
export {
  checkTrust,
  type Ed25519Jwk,
  generateSigningKey,
  importSigningKey,
  type PackageSignature,
  type SignatureState,
  type SignedPackage,
  type SigningKey,
  signPackage,
  UntrustedPackageError,
} from "./package_signature.ts";
export { explainPackage } from "./explain.ts";
export { EmptyPackageError, isEmptyIr } from "./empty_package.ts";
