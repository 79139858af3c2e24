/**
 * The behavior compiler: normalize, consolidate, staticize (a skeleton tree, or the agent form for conversations), verify, package; importers of existing trajectories (held-out coverage is in lib/eval/coverage.ts).
 *
 * @module
 */
export {
  type ArgExpr,
  type BehaviorIr,
  type CompiledBehavior,
  type Decides,
  IR_VERSION,
  type IrNode,
  type IrNodeKind,
  type NodeProvenance,
  type Recovery,
  type Signature,
  type SignatureField,
} from "./core/ir.ts";
export {
  changesState,
  type CoreStep,
  coreSteps,
  type Effects,
  errorCode,
} from "./core/core_steps.ts";
export { extractFacts, type Fact, FACT_TYPES, factKey } from "./tree/facts.ts";
export { consolidate, type ConsolidateOptions } from "./tree/consolidate.ts";
export type { Candidate, Evidence } from "./core/candidate.ts";
export { staticize, type StaticizeOptions } from "./tree/staticize.ts";
export {
  type CompilerModel,
  type DecisionDetail,
  residualizeDecision,
  type ResidualizeOptions,
} from "./tree/residualize.ts";
export {
  promoteReplayVerified,
  type VerificationReport,
} from "./core/verification.ts";
export { verify, type VerifyOptions } from "./tree/verify.ts";
export {
  chooseCase,
  evalArg,
  evalArgs,
  resolveRef,
  UnresolvedRefError,
} from "./tree/evaluate.ts";
export {
  type BehaviorPackage,
  buildPackage,
  type BuildPackageOptions,
  PACKAGE_VERSION,
} from "./core/package.ts";
export {
  compileBehavior,
  type CompileOptions,
  type CompileResult,
} from "./compile_behavior.ts";
export {
  describeNode,
  explainPackage,
  summarizePackage,
} from "./core/explain.ts";
export {
  describeEffects,
  EFFECT_SOURCES,
  effectFromAnnotations,
  type EffectSource,
  type EffectsResolution,
  looksReadOnly,
  resolveEffects,
  type ResolveEffectsOptions,
} from "./core/effects.ts";
export { HOST_TOOL_EFFECTS, hostToolEffect } from "./core/host_tools.ts";
export {
  TAU2_TOOL_TYPES,
  tau2ToolAnnotations,
  type Tau2ToolType,
} from "../importers/tau2_tool_types.ts";
export {
  type ConvertOptions,
  convertTrajectories,
  IMPORT_FORMATS,
  ImportError,
  type ImportFormat,
} from "../importers/trajectories.ts";
export {
  type AgentForm,
  type AgentFormOptions,
  type AgentTuning,
  buildAgentForm,
} from "./agent/agent_form.ts";
export {
  AgentEngine,
  type ChoiceCheck,
  DEFAULT_FANOUT,
  type EngineCall,
  type LookupCall,
} from "./agent/agent_engine.ts";
export {
  type AgentReplay,
  replayAgent,
  type StepVerdict,
} from "./agent/agent_replay.ts";
export {
  type Binding,
  type Cover,
  learnBindings,
  type LearnOptions,
} from "./agent/bindings.ts";
export {
  allows,
  type CallRecord,
  candidatesOf,
  type ConversationState,
} from "./agent/sources.ts";
export {
  describeSource,
  type GeneralPath,
  type Source,
} from "./core/source.ts";
export type { BoundArg, ChoiceTool } from "./core/ir.ts";
export type { AgentNode, CallOrigin } from "./agent/agent_engine.ts";
export type { Leaf, MessageWords } from "./agent/sources.ts";
