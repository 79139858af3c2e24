/**
 * Client-side loops for the served-package tests: an agent on an official
 * client that runs each answer the package made (`x-harness-served:
 * package`) against the real retail environment and sends the results
 * back, until the gateway forwards a request to the model; that answer is
 * returned as the client got it.
 *
 * @module
 */
import type OpenAI from "openai";
import type { RetailEnv } from "../../eval/envs/tau2/mod.ts";
import type { AnthropicMessage } from "./_anthropic_sdk.ts";

/** A Chat Completions message the loop sends. */
export type ChatMessage = OpenAI.Chat.ChatCompletionMessageParam;

/** An Anthropic message the loop sends. */
export interface AnthropicTurn {
  /** `user` or `assistant`. */
  role: string;
  /** Text or blocks. */
  content: unknown;
}

/** One request of a loop: the answer, and whether the package made it. */
export type Ask<T, M> = (
  messages: M[],
) => Promise<{ data: T; served: boolean }>;

/** How many answers in a row a loop takes from the package at most. */
const MAX_SERVED = 20;

/**
 * Chat Completions: run the package's lookups until the model is asked.
 *
 * @param ask Sends the conversation (whole or streamed).
 * @param messages The conversation; grows with the served calls and results.
 * @param env The environment that runs the calls.
 * @returns The first answer the package did not make, and how many it made.
 * @throws {RangeError} When the package answers more than 20 times in a row.
 */
export async function chatUntilForwarded(
  ask: Ask<OpenAI.Chat.ChatCompletion, ChatMessage>,
  messages: ChatMessage[],
  env: RetailEnv,
): Promise<{ answer: OpenAI.Chat.ChatCompletion; served: number }> {
  for (let served = 0; served <= MAX_SERVED; served++) {
    const { data, served: byPackage } = await ask(messages);
    if (!byPackage) return { answer: data, served };
    const m = data.choices[0].message;
    messages.push({
      role: "assistant",
      content: m.content,
      tool_calls: m.tool_calls,
    });
    for (const c of m.tool_calls ?? []) {
      if (c.type !== "function") continue;
      messages.push({
        role: "tool",
        tool_call_id: c.id,
        content: env.respond(c.function.name, JSON.parse(c.function.arguments)),
      });
    }
  }
  throw new RangeError(`The package answered ${MAX_SERVED} times in a row`);
}

/**
 * Anthropic Messages: run the package's lookups until the model is asked.
 *
 * @param ask Sends the conversation (whole or streamed).
 * @param messages The conversation; grows with the served calls and results.
 * @param env The environment that runs the calls.
 * @returns The first answer the package did not make, and how many it made.
 * @throws {RangeError} When the package answers more than 20 times in a row.
 */
export async function anthropicUntilForwarded(
  ask: Ask<AnthropicMessage, AnthropicTurn>,
  messages: AnthropicTurn[],
  env: RetailEnv,
): Promise<{ answer: AnthropicMessage; served: number }> {
  for (let served = 0; served <= MAX_SERVED; served++) {
    const { data, served: byPackage } = await ask(messages);
    if (!byPackage) return { answer: data, served };
    messages.push({ role: "assistant", content: data.content });
    messages.push({
      role: "user",
      content: data.content.flatMap((b) =>
        b.type === "tool_use"
          ? [{
            type: "tool_result",
            tool_use_id: b.id,
            content: env.respond(b.name, b.input),
          }]
          : []
      ),
    });
  }
  throw new RangeError(`The package answered ${MAX_SERVED} times in a row`);
}
