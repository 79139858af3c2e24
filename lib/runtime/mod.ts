/**
 * Running a compiled package: `runPackage()` (either form), `BehaviorRuntime` (tree packages), `Conversation` and `AgentSession` (agent-form packages), package loading and checks.
 *
 * @module
 */
export { loadPackage, PackageError, validatePackage } from "./load_package.ts";
export { BehaviorRuntime } from "./runtime.ts";
export {
  MissingCapabilityError,
  type ModelBinding,
  type ReactDecision,
  type RunOptions,
  type RunResult,
  type RunStep,
  type ToolRegistry,
} from "./runtime_types.ts";
export {
  AgentSession,
  type AgentSessionOptions,
  ChoiceRefusedError,
  type SessionCallResult,
} from "./agent_session.ts";
export { type BoundTool, callWithArgs, isTool } from "./bind_args.ts";
export {
  Conversation,
  type ConversationCall,
  type ConversationCapabilities,
  type ConversationOptions,
  type ConversationStats,
  type TurnResult,
} from "./conversation.ts";
export {
  type ConversationRun,
  type PackageCapabilities,
  packageForm,
  type PackageRun,
  runPackage,
  type RunPackageOptions,
} from "./run_package.ts";
export { type LookupResult } from "./agent_session.ts";
export type { LookupCall } from "../compiler/agent/agent_engine.ts";
export {
  type ChatModelBinding,
  chatModelBinding,
  type ChatModelBindingOptions,
} from "./chat_binding.ts";
