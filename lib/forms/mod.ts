/**
 * The forms of compiled behavior and running a package (the `./forms`
 * face; `./runtime` is its old name). {@linkcode runPackage} runs a package
 * in its form (a tree package once on an input, an agent-form package as a
 * conversation over the user's messages); {@linkcode Conversation} drives
 * an agent-form package one user message at a time;
 * {@linkcode chatModelBinding} answers a tree package's model leaves with a
 * chat model; {@linkcode loadPackage} and {@linkcode validatePackage} read
 * and check a package first, {@linkcode verifyPackage} checks what a
 * package alone proves, {@linkcode explainPackage} renders one for people.
 *
 * Each form lives in its folder (`lib/forms/tree/`, `lib/forms/agent/`)
 * behind the {@linkcode Form} interface: its node kinds (`NodeKind`), its
 * compile, replay, explain, run and serve. The table of forms
 * ({@linkcode FormTable}, `form_table.ts`) is the one place that names
 * them: it decides a package's form ({@linkcode formOf}) and holds every
 * form's node kinds. The engines' own drivers (`BehaviorRuntime` for the
 * tree form, `AgentSession` under `Conversation`) stay in their folders:
 * `runPackage` and `Conversation` are how they are run.
 *
 * @module
 */
export { runPackage } from "./run_package.ts";
export type {
  CompiledForm,
  Form,
  FormCompileOptions,
  FormReplayOptions,
  FormRunOptions,
  ReplayMeasure,
  RunCapabilities,
} from "./form.ts";
export {
  type AnyNode,
  describeRun,
  FORM_TABLE,
  type FormName,
  formNamed,
  formOf,
  type FormOptions,
  FORMS,
  FormTable,
  NODE_KINDS,
  type PackageCapabilities,
  type PackageRun,
  type RunPackageOptions,
} from "./form_table.ts";
export type {
  NodeKind,
  NodeKinds,
  StructureScope,
} from "../package/node_kind.ts";
export {
  irTools,
  isEmptyIr,
  loadPackage,
  validatePackage,
} from "./validate_package.ts";
export { PackageError } from "../package/package_error.ts";
export { EmptyPackageError } from "../package/empty_package.ts";
export {
  type PackageCheck,
  type PackageVerification,
  verifyPackage,
  type VerifyPackageOptions,
} from "./verify_package.ts";
export {
  describeNode,
  explainPackage,
  nodeChildren,
  plainExplanation,
} from "./explain_package.ts";
export {
  TREE_FORM,
  type TreeCapabilities,
  type TreeCompileOptions,
  type TreeRunOptions,
} from "./tree/tree_form.ts";
export type { CompilerModel } from "./tree/residualize.ts";
export type { CompiledBehavior } from "../package/ir.ts";
export type {
  ActionNode,
  ArgExpr,
  BranchNode,
  Decides,
  PredictNode,
  ReactNode,
  Recovery,
  SequenceNode,
  StopNode,
  TreeNode,
} from "./tree/tree_nodes.ts";
export { AGENT_FORM, type AgentCompileOptions } from "./agent/agent_form.ts";
export type { AgentTuning } from "./agent/build_agent_form.ts";
export type {
  AgentFormNode,
  AgentNode,
  BoundArg,
  ChoiceNode,
  ChoiceTool,
  LookupNode,
} from "./agent/agent_nodes.ts";
export type {
  AgentCapabilities,
  AgentRunOptions,
  ConversationRun,
} from "./agent/run_conversation.ts";
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
