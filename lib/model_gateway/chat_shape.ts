/**
 * The neutral chat shape: a provider-neutral request (messages, tool
 * schemas, an optional structured-output schema) and answer (text, tool
 * calls, token usage). Each wire's folder writes a request of this shape in
 * its API and reads its API's answer back into it
 * (`wires/<name>/chat.ts`); the model bindings (`lib/models/`), the
 * conversation driver, the tree form's leaves and the evaluation's
 * scripted model speak only this. What the gateway records of an exchange
 * is read by the same wire folders into {@linkcode NormRequest} /
 * {@linkcode NormResponse} (`wire_types.ts`): a lossy view (no null
 * content, no argument text once it parsed) that
 * {@linkcode chatToolCallOf} turns into this shape.
 *
 * @module
 */
import type { NormToolCall } from "./wire_types.ts";

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

/**
 * Parse a tool call's arguments as the model sent them. Whitespace only
 * (some servers send `""` for a tool without parameters) is `{}`.
 *
 * @param raw The arguments text.
 * @returns The object, or null with why.
 */
export function parseToolArguments(
  raw: string,
): { arguments: Record<string, unknown> | null; arguments_error?: string } {
  if (raw.trim() === "") return { arguments: {} };
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch (err) {
    return {
      arguments: null,
      arguments_error: `the arguments are not valid JSON (${
        (err as Error).message
      })`,
    };
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) {
    return {
      arguments: null,
      arguments_error: `the arguments are JSON but not an object (${
        Array.isArray(v) ? "an array" : v === null ? "null" : typeof v
      })`,
    };
  }
  return { arguments: v as Record<string, unknown> };
}

/**
 * A tool call as a wire's reader read it ({@linkcode NormToolCall}:
 * arguments `{}` and their text when they were not a JSON object) in the
 * chat shape (arguments `null`, the reason, and the text exactly as sent).
 *
 * @param call The call as read.
 * @param raw The arguments exactly as sent, when the caller has them (the
 *   reader keeps the text only when it did not parse).
 * @returns The chat tool call.
 */
export function chatToolCallOf(call: NormToolCall, raw?: string): ChatToolCall {
  const text = raw ?? call.arguments_text ?? JSON.stringify(call.arguments);
  return {
    id: call.id,
    name: call.name,
    ...parseToolArguments(text),
    raw_arguments: text,
  };
}
