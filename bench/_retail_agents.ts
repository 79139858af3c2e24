/**
 * τ² retail agent loops written on the official clients, as a user of the
 * model gateway would write them (copied from the gateway tests' loop,
 * `tests/model_gateway/_retail_agent.ts`, which bench/ may not import):
 * the conversation (system prompt, the recorded user's messages in order,
 * the retail tools' schemas) goes to the model; each tool call it answers
 * is run against the real retail environment (`RetailEnv.respond`, the
 * text τ² records) and sent back, until the model answers without tool
 * calls; then the next user message. A loop stops where the closed loop
 * (`eval/closed_loop.ts`) stops: before a user message that ends the
 * conversation (`###STOP###`, `###TRANSFER###`, `###OUT-OF-SCOPE###`), or
 * when the scripted model's script is over (`END_TEXT`).
 *
 * - {@linkcode runChatAgent}: `openai`, Chat Completions, whole answers.
 * - {@linkcode runMessagesAgent}: `@anthropic-ai/sdk`, Messages, streamed
 *   (`messages.stream`).
 *
 * Each call records whether the gateway answered it itself (the answer's
 * `x-harness-served: package`), so the bench can tell the package's
 * lookups from the model's calls.
 *
 * @module
 */
import type OpenAI from "openai";
import { RETAIL_TOOL_SCHEMAS, RetailEnv } from "../eval/envs/tau2/mod.ts";
import { END_TEXT } from "../eval/scripted_model_server.ts";
import type { AnthropicBlock, AnthropicClient } from "./_anthropic_sdk.ts";

/** A user message that ends the conversation (the closed loop's rule). */
const USER_END = /###(STOP|TRANSFER|OUT-OF-SCOPE)###/;

/** The retail tools as Chat Completions `tools`. */
const CHAT_TOOLS: OpenAI.Chat.ChatCompletionTool[] = RETAIL_TOOL_SCHEMAS.map((
  { name, description, parameters },
) => ({ type: "function", function: { name, description, parameters } }));

/** The retail tools as Messages `tools`. */
const MESSAGES_TOOLS = RETAIL_TOOL_SCHEMAS.map((
  { name, description, parameters },
) => ({ name, description, input_schema: parameters }));

/** What both loops need. */
export interface AgentOptions {
  /** The retail database the environment copies (never mutated). */
  db: unknown;
  /** The recorded user's messages, in order. */
  users: readonly string[];
  /** The system prompt. */
  instructions: string;
  /** Headers of every request (`x-harness-capture`, `x-harness-episode`). */
  headers: Record<string, string>;
  /** Requests at most, a guard against a loop that never ends. @default 100 */
  maxRequests?: number;
}

/** One tool call the agent ran. */
export interface AgentCall {
  /** Tool. */
  name: string;
  /** Arguments. */
  arguments: Record<string, unknown>;
  /** What the environment answered. */
  content: string;
  /** The gateway answered it itself (the package's lookup). */
  served: boolean;
}

/** What one run did. */
export interface AgentRun {
  /** The environment after the run (its database shows the writes). */
  env: RetailEnv;
  /** Requests the agent sent. */
  requests: number;
  /** Tool calls run, in order. */
  calls: AgentCall[];
  /** Why it stopped. */
  ended: "user_end" | "script_end" | "users_done";
  /** What the gateway said where it gave up after refusals (`x-harness-refused`). */
  gave_up: string[];
}

/** One model answer, as a loop reads it. */
interface Answer {
  text: string | null;
  calls: { id: string; name: string; arguments: Record<string, unknown> }[];
  served: boolean;
  /** The gateway gave up after refusals (`x-harness-refused`). */
  gave_up: boolean;
  /** The answer as the client returned it (pushed back as history). */
  raw: unknown;
}

/**
 * The loop both wires share: user messages in order, tool calls run until
 * an answer without calls.
 */
async function drive(
  options: AgentOptions,
  ask: () => Promise<Answer>,
  push: {
    user(text: string): void;
    answer(a: Answer): void;
    results(r: { id: string; content: string }[]): void;
  },
): Promise<AgentRun> {
  const env = new RetailEnv(options.db);
  const max = options.maxRequests ?? 100;
  const run: AgentRun = {
    env,
    requests: 0,
    calls: [],
    ended: "users_done",
    gave_up: [],
  };
  for (const text of options.users) {
    if (USER_END.test(text)) {
      run.ended = "user_end";
      return run;
    }
    push.user(text);
    for (;;) {
      if (run.requests >= max) {
        throw new RangeError(
          `The agent loop sent ${max} requests without the conversation ending`,
        );
      }
      run.requests++;
      const a = await ask();
      if (a.text === END_TEXT) {
        run.ended = "script_end";
        return run;
      }
      if (a.gave_up) run.gave_up.push(a.text ?? "");
      push.answer(a);
      if (a.calls.length === 0) break;
      const results = a.calls.map((c) => {
        const content = env.respond(c.name, c.arguments);
        run.calls.push({
          name: c.name,
          arguments: c.arguments,
          content,
          served: a.served,
        });
        return { id: c.id, content };
      });
      push.results(results);
    }
  }
  return run;
}

const servedBy = (res: Response) =>
  res.headers.get("x-harness-served") === "package";
const gaveUp = (res: Response) => res.headers.has("x-harness-refused");

function objectArgs(raw: string, where: string): Record<string, unknown> {
  const v = JSON.parse(raw || "{}");
  if (typeof v !== "object" || v === null || Array.isArray(v)) {
    throw new SyntaxError(`The arguments of ${where} are not a JSON object`);
  }
  return v;
}

/**
 * One retail conversation through Chat Completions (`openai`).
 *
 * @param client The client (its base URL is the gateway's `/v1`).
 * @param options Database, user messages, system prompt, headers.
 * @returns The environment, counts and the calls made.
 * @throws {RangeError} When the model asks for more than `maxRequests` answers.
 * @throws {SyntaxError} When the model's tool arguments are not a JSON object.
 */
export function runChatAgent(
  client: OpenAI,
  options: AgentOptions,
): Promise<AgentRun> {
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
    { role: "system", content: options.instructions },
  ];
  return drive(options, async () => {
    const { data, response } = await client.chat.completions.create({
      model: "scripted-replay",
      messages,
      tools: CHAT_TOOLS,
    }, { headers: options.headers }).withResponse();
    const m = data.choices[0].message;
    const calls = (m.tool_calls ?? []).filter((c) => c.type === "function");
    return {
      text: m.content,
      calls: calls.map((c) => ({
        id: c.id,
        name: c.function.name,
        arguments: objectArgs(c.function.arguments, `${c.function.name}`),
      })),
      served: servedBy(response),
      gave_up: gaveUp(response),
      raw: calls,
    };
  }, {
    user: (text) => messages.push({ role: "user", content: text }),
    answer: (a) => {
      const calls = a.raw as OpenAI.Chat.ChatCompletionMessageToolCall[];
      messages.push({
        role: "assistant",
        content: a.text,
        ...(calls.length ? { tool_calls: calls } : {}),
      });
    },
    results: (rs) => {
      for (const r of rs) {
        messages.push({ role: "tool", tool_call_id: r.id, content: r.content });
      }
    },
  });
}

/**
 * One retail conversation through Messages (`@anthropic-ai/sdk`), every
 * answer streamed (`messages.stream`, then `finalMessage()`).
 *
 * @param client The client (its base URL is the gateway's, without `/v1`).
 * @param options Database, user messages, system prompt, headers.
 * @returns The environment, counts and the calls made.
 * @throws {RangeError} When the model asks for more than `maxRequests` answers.
 */
export function runMessagesAgent(
  client: AnthropicClient,
  options: AgentOptions,
): Promise<AgentRun> {
  const messages: { role: "user" | "assistant"; content: unknown }[] = [];
  return drive(options, async () => {
    const stream = client.messages.stream({
      model: "scripted-replay",
      max_tokens: 4096,
      system: options.instructions,
      messages,
      tools: MESSAGES_TOOLS,
    }, { headers: options.headers });
    const { response } = await stream.withResponse();
    const m = await stream.finalMessage();
    const text = m.content.filter((b) => b.type === "text").map((b) => b.text)
      .join("");
    const calls = m.content.flatMap((b) =>
      b.type === "tool_use"
        ? [{ id: b.id, name: b.name, arguments: b.input ?? {} }]
        : []
    );
    return {
      text: text === "" ? null : text,
      calls,
      served: servedBy(response),
      gave_up: gaveUp(response),
      raw: m.content,
    };
  }, {
    user: (text) => messages.push({ role: "user", content: text }),
    answer: (a) => messages.push({ role: "assistant", content: a.raw }),
    results: (rs) =>
      messages.push({
        role: "user",
        content: rs.map((r): AnthropicBlock => ({
          type: "tool_result",
          tool_use_id: r.id,
          content: r.content,
          ...(r.content.startsWith("Error:") ? { is_error: true } : {}),
        })),
      }),
  });
}
