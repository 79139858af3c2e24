/**
 * The Vercel AI SDK's models over a base URL (the scripted upstream, or the
 * gateway in front of it), and two tools with `execute` so that
 * `generateText`/`streamText` run their own multi-step loop.
 *
 * @module
 */
import { jsonSchema, type LanguageModel, tool } from "ai";
import { createOpenAI } from "@ai-sdk/openai";
import { createAnthropic } from "@ai-sdk/anthropic";

/** Which wire a framework model speaks. */
export type FrameworkWire = "chat" | "responses" | "messages";

/** Base URLs as the official clients take them. */
export interface Bases {
  /** OpenAI base (`…/v1`). */
  openaiBase: string;
  /** Anthropic base (without `/v1`; the AI SDK's gets `/v1` added here). */
  anthropicBase: string;
}

/**
 * One AI SDK model per wire.
 *
 * @param bases Where to send requests.
 * @param options API key and headers on every request.
 * @returns `chat` (`openai.chat`), `responses` (`openai(model)`, the
 *   Responses API) and `messages` (Anthropic).
 */
export function frameworkModels(
  bases: Bases,
  options: { apiKey: string; headers?: Record<string, string> },
): Record<FrameworkWire, LanguageModel> {
  const openai = createOpenAI({
    baseURL: bases.openaiBase,
    apiKey: options.apiKey,
    headers: options.headers,
  });
  const anthropic = createAnthropic({
    baseURL: `${bases.anthropicBase}/v1`,
    apiKey: options.apiKey,
    headers: options.headers,
  });
  return {
    chat: openai.chat("gpt-up"),
    responses: openai("gpt-up"),
    messages: anthropic("claude-up"),
  };
}

/** What the tools were called with, in call order. */
export type ToolLog = { name: string; input: Record<string, unknown> }[];

/**
 * `get_weather` and `get_time`, each with an `execute` that logs its input
 * and answers from it.
 *
 * @param log Where calls are logged.
 * @returns The tool set.
 */
export function weatherTools(log: ToolLog) {
  return {
    get_weather: tool({
      description: "The weather in a city",
      inputSchema: jsonSchema<{ city: string; unit?: string }>({
        type: "object",
        properties: { city: { type: "string" }, unit: { type: "string" } },
        required: ["city"],
      }),
      execute: (input) => {
        log.push({ name: "get_weather", input });
        return Promise.resolve({ city: input.city, temperature: 21 });
      },
    }),
    get_time: tool({
      description: "The time in a time zone",
      inputSchema: jsonSchema<{ timezone: string }>({
        type: "object",
        properties: { timezone: { type: "string" } },
        required: ["timezone"],
      }),
      execute: (input) => {
        log.push({ name: "get_time", input });
        return Promise.resolve({ timezone: input.timezone, time: "10:42" });
      },
    }),
  };
}

/** The two parallel calls the scripted model makes first. */
export const PARALLEL_CALLS = [
  { name: "get_weather", arguments: { city: "Paris", unit: "celsius" } },
  { name: "get_time", arguments: { timezone: "Europe/Paris" } },
];

/**
 * The tool results a framework sent back in a request body, by call id, in
 * the wire's own shape: chat `role: "tool"` messages, responses
 * `function_call_output` items, messages `tool_result` blocks.
 *
 * @param wire The wire.
 * @param body The request's JSON body.
 * @returns Call id → the result text sent.
 */
export function toolResultsSent(
  wire: FrameworkWire,
  body: Record<string, unknown> | null,
): Record<string, string> {
  const out: Record<string, string> = {};
  const text = (v: unknown) => typeof v === "string" ? v : JSON.stringify(v);
  if (wire === "chat") {
    for (const m of (body?.messages ?? []) as Record<string, unknown>[]) {
      if (m.role === "tool") out[m.tool_call_id as string] = text(m.content);
    }
  } else if (wire === "responses") {
    for (const i of (body?.input ?? []) as Record<string, unknown>[]) {
      if (i.type === "function_call_output") {
        out[i.call_id as string] = text(i.output);
      }
    }
  } else {
    for (const m of (body?.messages ?? []) as Record<string, unknown>[]) {
      if (!Array.isArray(m.content)) continue;
      for (const b of m.content as Record<string, unknown>[]) {
        if (b.type === "tool_result") {
          out[b.tool_use_id as string] = text(b.content);
        }
      }
    }
  }
  return out;
}

/**
 * The call id the scripted upstream gives call `i` of exchange `n`.
 *
 * @param wire The wire.
 * @param n Exchange number (1-based).
 * @param i Call index.
 * @returns The id.
 */
export function scriptedCallId(
  wire: FrameworkWire,
  n: number,
  i: number,
): string {
  return wire === "messages" ? `toolu_${n}_${i}` : `call_${n}_${i}`;
}
