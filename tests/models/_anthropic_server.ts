/**
 * A local server that speaks the Anthropic Messages API
 * (`POST /v1/messages`) from a scripted queue, and builders of its answers.
 *
 * @module
 */
import {
  type ScriptedAnswer,
  type ScriptedServer,
  startScriptedServer,
} from "./_scripted_server.ts";

/** A running Anthropic-compatible test server. */
export interface AnthropicTestServer extends ScriptedServer {
  /** Base URL to give the binding (no `/v1`). */
  baseUrl: string;
}

/**
 * Start the server.
 *
 * @param answers Scripted answers.
 * @returns The server.
 */
export function startAnthropicServer(
  answers: ScriptedAnswer[] = [],
): AnthropicTestServer {
  const s = startScriptedServer(answers);
  return Object.assign(s, { baseUrl: s.origin });
}

/** What one message answer holds. */
export interface MessageSpec {
  /** Content blocks (text, tool_use, …). */
  content: Record<string, unknown>[];
  /** Stop reason (default `end_turn`, or `tool_use` with tool_use blocks). */
  stop_reason?: string;
  /** Usage (default 13 input, 5 output tokens). */
  usage?: Record<string, number> | null;
  /** Model name. */
  model?: string;
}

/**
 * A 200 answer with one message.
 *
 * @param spec What it holds.
 * @returns The scripted answer.
 */
export function message(spec: MessageSpec): ScriptedAnswer {
  const usesTool = spec.content.some((b) => b.type === "tool_use");
  return {
    json: {
      id: "msg_1",
      type: "message",
      role: "assistant",
      model: spec.model ?? "claude-test-1",
      content: spec.content,
      stop_reason: spec.stop_reason ?? (usesTool ? "tool_use" : "end_turn"),
      stop_sequence: null,
      ...(spec.usage === null
        ? {}
        : { usage: spec.usage ?? { input_tokens: 13, output_tokens: 5 } }),
    },
  };
}

/**
 * An Anthropic-style error answer.
 *
 * @param status HTTP status.
 * @param type The error's type (`rate_limit_error`, `api_error`, …).
 * @param msg The error's message.
 * @param headers Extra headers (`retry-after`).
 * @returns The scripted answer.
 */
export function anthropicError(
  status: number,
  type: string,
  msg: string,
  headers: Record<string, string> = {},
): ScriptedAnswer {
  return {
    status,
    headers,
    json: { type: "error", error: { type, message: msg } },
  };
}
