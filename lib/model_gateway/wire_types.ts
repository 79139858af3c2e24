/**
 * What the model gateway reads of one exchange, whatever the wire: the
 * request's conversation and the model's answer, in one shape
 * ({@linkcode NormRequest}, {@linkcode NormResponse}).
 *
 * @module
 */
import type { ExposedTool } from "../trace/tool_events.ts";

/**
 * A model API the gateway speaks, by the name its spec records
 * (`wires/registry.ts` lists them: `openai_chat`, `gemini_generate_content` …).
 */
export type Wire = string;

/** A tool call the model made. */
export interface NormToolCall {
  /** The call id the wire gives it. */
  id: string;
  /** Tool name. */
  name: string;
  /** Arguments (`{}` when they are not a JSON object). */
  arguments: Record<string, unknown>;
  /** The arguments' text when they did not parse as a JSON object. */
  arguments_text?: string;
}

/** A tool's answer the client sent back. */
export interface NormToolResult {
  /** The call id it answers. */
  id: string;
  /** The answer's text as sent. */
  text: string;
  /** The wire says the tool failed (Anthropic `is_error`). */
  is_error: boolean;
}

/** One message of a request's conversation. */
export interface NormMessage {
  /** Who said it. */
  role: "system" | "user" | "assistant" | "tool";
  /** Its text (text parts joined; host-added reminders left out). */
  text: string;
  /** Tool calls (assistant). */
  tool_calls: NormToolCall[];
  /** Tool results (tool, or user with Anthropic `tool_result` blocks). */
  tool_results: NormToolResult[];
  /** Identity of the message: a hash of it without cache marks. */
  hash: string;
  /** An item the conversation keeps but nothing reads (Responses reasoning). */
  opaque?: boolean;
}

/** What the gateway reads of a request. */
export interface NormRequest {
  /** The wire. */
  wire: Wire;
  /** Model asked for. */
  model: string | null;
  /** Whether the answer is streamed. */
  stream: boolean;
  /** The conversation as sent (for the Responses API with `previous_response_id`, only the new items). */
  messages: NormMessage[];
  /** Tools offered. */
  tools: ExposedTool[];
  /** Sampling and limits (temperature, max tokens, tool choice …). */
  params: Record<string, unknown>;
  /** Claude Code's session id (`metadata.user_id`), when sent. */
  session_id: string | null;
  /** Responses API: the response this one continues. */
  previous_response_id: string | null;
  /** Responses API: the conversation it belongs to (`conversation`, a string or `{id}`). */
  conversation?: string | null;
}

/** Token usage, as the upstream counted. */
export interface NormUsage {
  /** Prompt tokens (Anthropic: not counting cache reads and writes). */
  input_tokens: number | null;
  /** Completion tokens. */
  output_tokens: number | null;
  /** Anthropic: tokens written to the cache. */
  cache_creation_input_tokens?: number | null;
  /** Tokens read from the cache. */
  cache_read_input_tokens?: number | null;
  /** input + output. */
  total_tokens: number | null;
}

/** What the gateway reads of a model's answer. */
export interface NormResponse {
  /** The answer's id (Responses API: continues conversations). */
  id: string | null;
  /** Model that answered. */
  model: string | null;
  /** The answer's text. */
  text: string;
  /** Tool calls, in order. */
  tool_calls: NormToolCall[];
  /** Why it stopped (`stop`, `tool_calls`, `end_turn`, `tool_use` …). */
  stop_reason: string | null;
  /** Usage, when the upstream sent it. */
  usage: NormUsage | null;
}

/** A wire's readers. */
export interface WireReader {
  /**
   * Read a request body.
   *
   * @param body The parsed JSON body.
   * @param hashes The messages' hashes, when computed already (one per
   *   item of the conversation's list, in order: `messageHash`).
   * @returns What it says.
   * @throws {WireShapeError} When it is not this API's request shape.
   */
  request(body: unknown, hashes?: readonly string[]): NormRequest;
  /**
   * Read a whole (non-streamed) answer.
   *
   * @param body The parsed JSON body.
   * @returns What it says.
   * @throws {WireShapeError} When it is not this API's answer shape.
   */
  response(body: unknown): NormResponse;
  /** A fresh reader of a streamed answer's events. */
  streamReader(): StreamAccumulator;
}

/** Gathers a streamed answer event by event. */
export interface StreamAccumulator {
  /**
   * Take one server-sent event.
   *
   * @param event The `event:` name, or null.
   * @param data The `data:` text.
   */
  add(event: string | null, data: string): void;
  /** The answer so far (complete once the stream ended). */
  result(): NormResponse;
  /** Whether the stream's final event arrived. */
  readonly complete: boolean;
}

/** A body that is not the API's shape (the gateway records nothing of it). */
export class WireShapeError extends Error {
  /**
   * Create a `WireShapeError`.
   *
   * @param message What is wrong.
   */
  constructor(message: string) {
    super(message);
    this.name = "WireShapeError";
  }
}

/**
 * A tool a request offers, as `toolset.exposed` records it.
 *
 * @param name Its name.
 * @param about `description` (kept when a string) and `schema` (its input
 *   schema, when given).
 * @returns The exposed tool.
 */
export function exposedTool(
  name: string,
  { description, schema }: { description: unknown; schema: unknown },
): ExposedTool {
  return {
    name,
    logical_id: null,
    ...(typeof description === "string" ? { description } : {}),
    ...(schema !== undefined ? { input_schema: schema } : {}),
  };
}

/** Whether a value is a plain object. */
export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** A finite number, or null. */
export function numberOrNull(v: unknown): number | null {
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

/**
 * Arguments as an object: parsed from JSON text when they are text.
 *
 * @param raw The arguments as sent (object or JSON text).
 * @returns The object, and the text when it did not parse as one.
 */
export function readArguments(
  raw: unknown,
): { arguments: Record<string, unknown>; arguments_text?: string } {
  if (isObject(raw)) return { arguments: raw };
  if (typeof raw === "string") {
    if (raw.trim() === "") return { arguments: {} };
    try {
      const v = JSON.parse(raw);
      if (isObject(v)) return { arguments: v };
    } catch {
      // Kept as text below.
    }
    return { arguments: {}, arguments_text: raw };
  }
  return { arguments: {} };
}
