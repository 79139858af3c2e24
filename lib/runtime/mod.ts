/**
 * Running a compiled package: {@linkcode runPackage} runs either form (a
 * tree package once on an input, an agent-form package as a conversation
 * over the user's messages); {@linkcode Conversation} drives an agent-form
 * package one user message at a time; {@linkcode chatModelBinding} answers a
 * tree package's model leaves with a chat model; {@linkcode loadPackage}
 * and {@linkcode validatePackage} read and check a package first.
 *
 * The engines' own drivers (`BehaviorRuntime` for the tree form,
 * `AgentSession` under `Conversation`) stay in their files: `runPackage` and
 * `Conversation` are how they are run.
 *
 * @module
 */
export {
  type ConversationRun,
  type PackageCapabilities,
  type PackageRun,
  runPackage,
  type RunPackageOptions,
} from "./run_package.ts";
export {
  loadPackage,
  PackageError,
  validatePackage,
} from "../package/load_package.ts";
export { GatewayDriver, UnservableError } from "./gateway_driver.ts";
export type { BoundTool } from "./bind_args.ts";
export {
  MissingCapabilityError,
  type ModelBinding,
  type ReactDecision,
  type RunResult,
  type RunStep,
  type ToolRegistry,
} from "./runtime_types.ts";
export {
  Conversation,
  type ConversationCall,
  type ConversationCapabilities,
  type ConversationOptions,
  type ConversationStats,
  type TurnResult,
} from "./conversation.ts";
export {
  type ChatModelBinding,
  chatModelBinding,
  type ChatModelBindingOptions,
} from "./chat_binding.ts";
