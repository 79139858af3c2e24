/**
 * Model bindings: the provider-neutral chat contract, the OpenAI-compatible
 * (Chat Completions) and Anthropic (Messages) bindings over their official
 * SDKs, loaded only when a model is first asked, {@linkcode openModel} to open
 * one from a `provider/model` id (the runtime's `chatModelBinding` runs the
 * tree form's predict and react leaves on one).
 *
 * Importing this module loads no npm package.
 *
 * @example
 * ```ts
 * import { openModel } from "./mod.ts";
 * import { equal } from "node:assert/strict";
 *
 * const model = openModel("openai/qwen3-8b", {
 *   url: "http://127.0.0.1:8080/v1",
 *   env: {},
 * });
 * equal(model.id, "openai/qwen3-8b");
 * ```
 *
 * @module
 */
export type {
  ChatMessage,
  ChatModel,
  ChatRequest,
  ChatResponse,
  ChatTool,
  ChatToolCall,
  ChatUsage,
  JsonSchema,
} from "./chat_types.ts";
export {
  ModelApiError,
  type ModelApiErrorDetails,
  type ModelApiFailure,
  ModelConfigError,
  ModelResponseError,
} from "./binding_errors.ts";
export { OpenAiChatModel, type OpenAiChatOptions } from "./openai_chat.ts";
export {
  AnthropicMessagesModel,
  type AnthropicMessagesOptions,
} from "./anthropic_messages.ts";
export {
  MODEL_ENV_VARS,
  MODEL_PROVIDERS,
  openModel,
  type OpenModelOptions,
} from "./open_model.ts";
