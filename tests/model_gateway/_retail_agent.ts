/**
 * A τ² retail agent loop written on the official `openai` client, as a
 * user of the model gateway would write one, sending nothing of ours: τ²'s
 * own message list (the system prompt, the agent's greeting first, as τ²'s
 * orchestrator starts every conversation, then the recorded user's
 * messages in order) and the retail tools' schemas go to Chat Completions;
 * each answer names the episode it was recorded under (read back to mark
 * outcomes, `ANSWER_HEADERS.episode`); each tool call the model answers is
 * run against the real retail environment (`RetailEnv.respond`, the text
 * τ² records: a string as is, JSON for a model, `Error: …` for a refusal)
 * and sent back as a `role: "tool"` message, until the model answers
 * without tool calls; then the next user message. It stops where the
 * closed loop (`eval/closed_loop.ts`) stops: before a user message
 * that ends the conversation (`###STOP###`, `###TRANSFER###`,
 * `###OUT-OF-SCOPE###`), or when the scripted model's script is over
 * (`END_TEXT`).
 *
 * @module
 */
import type OpenAI from "openai";
import { RETAIL_TOOL_SCHEMAS, RetailEnv } from "../../eval/envs/tau2/mod.ts";
import { END_TEXT } from "../../eval/scripted_model_server.ts";
import { ANSWER_HEADERS } from "../../lib/model_gateway/answer_headers.ts";

/** What τ²-bench's orchestrator has the agent say first. */
export const TAU2_GREETING = "Hi! How can I help you today?";

/** A user message that ends the conversation (the closed loop's rule). */
const USER_END = /###(STOP|TRANSFER|OUT-OF-SCOPE)###/;

/** The retail tools as Chat Completions `tools`. */
export const RETAIL_CHAT_TOOLS: OpenAI.Chat.ChatCompletionTool[] =
  RETAIL_TOOL_SCHEMAS.map(({ name, description, parameters }) => ({
    type: "function",
    function: { name, description, parameters },
  }));

/** Options of {@linkcode runRetailAgent}. */
export interface RetailAgentOptions {
  /** The client (its base URL is the gateway's `/v1`). */
  client: OpenAI;
  /** The retail database the environment copies (never mutated). */
  db: unknown;
  /** The recorded user's messages, in order. */
  users: readonly string[];
  /** The system prompt. */
  instructions: string;
  /** The agent's greeting, sent first. @default TAU2_GREETING */
  greeting?: string | null;
  /** Model name sent. @default "scripted-replay" */
  model?: string;
  /** Requests at most, a guard against a loop that never ends. @default 100 */
  maxRequests?: number;
}

/** What one run did. */
export interface RetailAgentRun {
  /** The environment after the run (its database shows the writes). */
  env: RetailEnv;
  /** Chat Completions requests sent. */
  requests: number;
  /** Tool calls run, in order, with the content sent back. */
  calls: {
    name: string;
    arguments: Record<string, unknown>;
    content: string;
  }[];
  /** User messages sent. */
  users: number;
  /** Why it stopped: `user_end`, `script_end` or `users_done`. */
  ended: "user_end" | "script_end" | "users_done";
  /** The episodes the answers named, each once, in order. */
  episodes: string[];
}

/**
 * Run one retail conversation through Chat Completions.
 *
 * @param options Client, database, user messages, system prompt.
 * @returns The environment, counts and the calls made.
 * @throws {RangeError} When the model asks for more than `maxRequests` answers.
 * @throws {SyntaxError} When the model's tool arguments are not a JSON object.
 */
export async function runRetailAgent(
  options: RetailAgentOptions,
): Promise<RetailAgentRun> {
  const env = new RetailEnv(options.db);
  const max = options.maxRequests ?? 100;
  const greeting = options.greeting === undefined
    ? TAU2_GREETING
    : options.greeting;
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
    { role: "system", content: options.instructions },
    ...(greeting ? [{ role: "assistant" as const, content: greeting }] : []),
  ];
  const run: RetailAgentRun = {
    env,
    requests: 0,
    calls: [],
    users: 0,
    ended: "users_done",
    episodes: [],
  };
  for (const text of options.users) {
    if (USER_END.test(text)) {
      run.ended = "user_end";
      return run;
    }
    messages.push({ role: "user", content: text });
    run.users++;
    for (;;) {
      if (run.requests >= max) {
        throw new RangeError(
          `The agent loop sent ${max} requests without the conversation ending`,
        );
      }
      run.requests++;
      const { data: answer, response } = await options.client.chat.completions
        .create({
          model: options.model ?? "scripted-replay",
          messages,
          tools: RETAIL_CHAT_TOOLS,
        }).withResponse();
      const episode = response.headers.get(ANSWER_HEADERS.episode);
      if (episode !== null && !run.episodes.includes(episode)) {
        run.episodes.push(episode);
      }
      const m = answer.choices[0].message;
      if (m.content === END_TEXT) {
        run.ended = "script_end";
        return run;
      }
      const calls = (m.tool_calls ?? []).filter((c) => c.type === "function");
      messages.push({
        role: "assistant",
        content: m.content,
        ...(calls.length ? { tool_calls: calls } : {}),
      });
      if (calls.length === 0) break;
      for (const c of calls) {
        const args = JSON.parse(c.function.arguments || "{}");
        if (typeof args !== "object" || args === null || Array.isArray(args)) {
          throw new SyntaxError(
            `The arguments of ${c.function.name} (${c.id}) are not a JSON object`,
          );
        }
        const content = env.respond(c.function.name, args);
        run.calls.push({ name: c.function.name, arguments: args, content });
        messages.push({ role: "tool", tool_call_id: c.id, content });
      }
    }
  }
  return run;
}
