/**
 * A local server that speaks OpenAI Chat Completions
 * (`POST /v1/chat/completions`) from a scripted queue, and builders of its
 * answers.
 *
 * @module
 */
import {
  type ScriptedAnswer,
  type ScriptedServer,
  startScriptedServer,
} from "./_scripted_server.ts";

/** A running OpenAI-compatible test server. */
export interface OpenAiTestServer extends ScriptedServer {
  /** Base URL to give the binding (`…/v1`). */
  baseUrl: string;
}

/**
 * Start the server.
 *
 * @param answers Scripted answers.
 * @returns The server.
 */
export function startOpenAiServer(
  answers: ScriptedAnswer[] = [],
): OpenAiTestServer {
  const s = startScriptedServer(answers);
  return Object.assign(s, { baseUrl: `${s.origin}/v1` });
}

/** What one completion holds. */
export interface CompletionSpec {
  /** Text. */
  content?: string | null;
  /** Tool calls: name and the arguments text as sent. */
  tool_calls?: { id?: string; name: string; arguments: string }[];
  /** Refusal text. */
  refusal?: string;
  /** Finish reason (derived when absent). */
  finish_reason?: string;
  /** Usage (default 11 prompt, 7 completion tokens; null for none). */
  usage?: { prompt_tokens: number; completion_tokens: number } | null;
  /** Model name. */
  model?: string;
}

/**
 * A 200 answer with one chat completion.
 *
 * @param spec What it holds.
 * @returns The scripted answer.
 */
export function completion(spec: CompletionSpec): ScriptedAnswer {
  const calls = spec.tool_calls?.map((c, i) => ({
    id: c.id ?? `call_${i + 1}`,
    type: "function",
    function: { name: c.name, arguments: c.arguments },
  }));
  return {
    json: {
      id: "chatcmpl-1",
      object: "chat.completion",
      created: 1_700_000_000,
      model: spec.model ?? "test-model-2024",
      choices: [{
        index: 0,
        message: {
          role: "assistant",
          content: spec.content ?? null,
          refusal: spec.refusal ?? null,
          ...(calls ? { tool_calls: calls } : {}),
        },
        finish_reason: spec.finish_reason ??
          (calls ? "tool_calls" : "stop"),
      }],
      ...(spec.usage === null ? {} : {
        usage: {
          ...(spec.usage ?? { prompt_tokens: 11, completion_tokens: 7 }),
          total_tokens: (spec.usage?.prompt_tokens ?? 11) +
            (spec.usage?.completion_tokens ?? 7),
        },
      }),
    },
  };
}

/**
 * An OpenAI-style error answer.
 *
 * @param status HTTP status.
 * @param message The error's message.
 * @param headers Extra headers (`retry-after`).
 * @returns The scripted answer.
 */
export function apiError(
  status: number,
  message: string,
  headers: Record<string, string> = {},
): ScriptedAnswer {
  return {
    status,
    headers,
    json: { error: { message, type: "server_error", code: null } },
  };
}
