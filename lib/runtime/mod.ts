/**
 * Running a compiled package: `BehaviorRuntime` (tree packages), `AgentSession` (agent-form packages), package loading and checks.
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
