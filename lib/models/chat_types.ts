/**
 * The chat contract every model binding speaks: the neutral chat shape
 * (`lib/model_gateway/chat_shape.ts`: messages, tool schemas, an optional
 * structured-output schema; text, tool calls, token usage), which each
 * wire's folder writes and reads, and {@linkcode ChatModel}, a bound model.
 * The conversation driver and the tree form's predict and react leaves use
 * only this.
 *
 * @module
 */
import type { ChatRequest, ChatResponse } from "../model_gateway/chat_shape.ts";

export type {
  ChatMessage,
  ChatRequest,
  ChatResponse,
  ChatTool,
  ChatToolCall,
  ChatUsage,
  JsonSchema,
} from "../model_gateway/chat_shape.ts";

/** A bound chat model. */
export interface ChatModel {
  /** `provider/model`, as given (`openai/gpt-4o`, `anthropic/claude-sonnet-4-5`). */
  readonly id: string;
  /** Ask once (the binding retries 429/5xx itself). */
  complete(request: ChatRequest): Promise<ChatResponse>;
}
