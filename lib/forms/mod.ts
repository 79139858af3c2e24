/**
 * Running a compiled package: {@linkcode runPackage} runs either form (a
 * tree package once on an input, an agent-form package as a conversation
 * over the user's messages); {@linkcode Conversation} drives an agent-form
 * package one user message at a time; {@linkcode chatModelBinding} answers a
 * tree package's model leaves with a chat model; {@linkcode loadPackage}
 * and {@linkcode validatePackage} read and check a package first.
 *
 * This is the `./runtime` face. Each form lives in its room
 * (`lib/forms/tree/`, `lib/forms/agent/`) behind the `Form` interface; the
 * table of forms (`form_table.ts`) decides a package's form, in one place.
 * The engines' own drivers (`BehaviorRuntime` for the tree form,
 * `AgentSession` under `Conversation`) stay in their rooms: `runPackage` and
 * `Conversation` are how they are run.
 *
 * @module
 */
export { runPackage } from "./run_package.ts";
export type { PackageCapabilities, RunPackageOptions } from "./form.ts";
export type { PackageRun } from "./form_table.ts";
export type { ConversationRun } from "./agent/run_conversation.ts";
export {
  loadPackage,
  PackageError,
  validatePackage,
} from "../package/load_package.ts";
export { GatewayDriver } from "./agent/gateway_driver.ts";
export { UnservableError } from "./unservable_error.ts";
export type { BoundTool } from "../runtime/bind_args.ts";
export type { RunFailure } from "../runtime/run_failure.ts";
export {
  MissingCapabilityError,
  type ToolRegistry,
} from "../runtime/runtime_types.ts";
export type { RunStep, TreeModelCall } from "./tree/tree_requests.ts";
export {
  type ModelBinding,
  type ReactDecision,
  type RunResult,
} from "./tree/tree_run_types.ts";
export { Conversation } from "./agent/conversation.ts";
export type {
  ConversationCall,
  ConversationCapabilities,
  ConversationOptions,
  ConversationStats,
  TurnResult,
} from "./agent/conversation_types.ts";
export {
  type ChatModelBinding,
  chatModelBinding,
  type ChatModelBindingOptions,
} from "./tree/chat_binding.ts";
