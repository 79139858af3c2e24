/**
 * The chat contract every model binding speaks: a provider-neutral request
 * (messages, tool schemas, an optional structured-output schema) and
 * answer (text, tool calls, token usage). The OpenAI-compatible and
 * Anthropic bindings map it to their wire formats; the conversation
 * driver and the tree form's predict and react leaves use only this.
 *
 * @module
 */

/** A JSON Schema (draft 2020-12 subset: the parts the model APIs accept). */
export type JsonSchema = Record<string, unknown>;

/** A tool call the model asked for. */
export interface ChatToolCall {
  /** The call's id (the API's, or one the binding made). */
  id: string;
  /** Tool name. */
  name: string;
  /**
   * Parsed arguments; `null` when the model's arguments were not a JSON
   * object (then `arguments_error` says why and `raw_arguments` has them).
   */
  arguments: Record<string, unknown> | null;
  /** The arguments exactly as the model sent them. */
  raw_arguments: string;
  /** Why `arguments` is null. */
  arguments_error?: string;
}

/** One message of a conversation. */
export type ChatMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string }
  | {
    role: "assistant";
    content: string | null;
    tool_calls?: ChatToolCall[];
  }
  | { role: "tool"; tool_call_id: string; name: string; content: string };

/** A tool offered to the model. */
export interface ChatTool {
  /** Name. */
  name: string;
  /** What it does. */
  description?: string;
  /** JSON Schema of its arguments (an object schema). */
  parameters: JsonSchema;
}

/** A request to a chat model. */
export interface ChatRequest {
  /** The conversation so far (a leading system message is the instructions). */
  messages: ChatMessage[];
  /** Tools the model may call. */
  tools?: ChatTool[];
  /** Whether the model must call a tool. @default "auto" */
  tool_choice?: "auto" | "required" | "none";
  /** Structured output: the answer's text must be JSON matching this schema. */
  response_format?: { name: string; schema: JsonSchema };
  /** Most tokens to generate. */
  max_tokens?: number;
  /** Sampling temperature. */
  temperature?: number;
  /** Cancels the request. */
  signal?: AbortSignal;
}

/** Token counts the API reported for one request. */
export interface ChatUsage {
  /** Tokens of the request. */
  prompt_tokens: number;
  /** Tokens generated. */
  completion_tokens: number;
}

/** What the model answered. */
export interface ChatResponse {
  /** Its text (null when it only called tools). */
  content: string | null;
  /** Tool calls, in order (empty when none). */
  tool_calls: ChatToolCall[];
  /** Why it stopped, normalized: `stop`, `tool_calls`, `length`, `refusal`, `content_filter` or the API's own word. */
  finish_reason: string;
  /** The model's refusal text, when it refused. */
  refusal: string | null;
  /** Token usage from the API's answer (null when the API sent none). */
  usage: ChatUsage | null;
  /** The model that answered (the API's name for it). */
  model: string;
}

/** A bound chat model. */
export interface ChatModel {
  /** `provider/model`, as given (`openai/gpt-4o`, `anthropic/claude-sonnet-4-5`). */
  readonly id: string;
  /** Ask once (the binding retries 429/5xx itself). */
  complete(request: ChatRequest): Promise<ChatResponse>;
}
