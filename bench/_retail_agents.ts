/**
 * τ² retail agent loops written on the official clients, as a user of the
 * model gateway would write them (copied from the gateway tests' loop,
 * `tests/model_gateway/_retail_agent.ts`, which bench/ may not import),
 * sending nothing of ours: τ²-bench's own message list (the system prompt,
 * the agent's greeting first, as τ²'s orchestrator starts every
 * conversation, then the recorded user's messages in order) and the retail
 * tools' schemas go to the model; each tool call it answers
 * is run against the real retail environment (`RetailEnv.respond`, the
 * text τ² records) and sent back, until the model answers without tool
 * calls; then the next user message. A loop stops where the closed loop
 * (`eval/closed_loop.ts`) stops: before a user message that ends the
 * conversation (`###STOP###`, `###TRANSFER###`, `###OUT-OF-SCOPE###`), or
 * when the scripted model's script is over (`END_TEXT`).
 *
 * - {@linkcode runChatAgent}: `openai`, Chat Completions, whole answers or
 *   streamed (`stream: true`, the chunks gathered as an agent does).
 * - {@linkcode runMessagesAgent}: `@anthropic-ai/sdk`, Messages, whole
 *   (`messages.create`) or streamed (`messages.stream`).
 *
 * Each run notes the episode every answer names (the gateway's response
 * header, `ANSWER_HEADERS.episode`), as a user reads it to mark outcomes,
 * and each call whether the gateway answered it itself (`served:
 * package`), so the bench can tell the package's lookups from the model's
 * calls.
 *
 * @module
 */
import type OpenAI from "openai";
import { RETAIL_TOOL_SCHEMAS, RetailEnv } from "../eval/envs/tau2/mod.ts";
import { ANSWER_HEADERS } from "../lib/model_gateway/answer_headers.ts";
import { END_TEXT } from "../eval/scripted_model_server.ts";
import type {
  AnthropicBlock,
  AnthropicClient,
  AnthropicMessage,
} from "./_anthropic_sdk.ts";

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
  /** The agent's greeting, sent first (τ²'s orchestrator: "Hi! How can I help you today?"). */
  greeting: string | null;
  /** Streamed answers. */
  stream: boolean;
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
  /** What the gateway said where it gave up after refusals. */
  gave_up: string[];
  /** The episodes the answers named, each once, in order (one, unless the gateway split the run). */
  episodes: string[];
  /** Answers that named no episode. */
  unnamed: number;
}

/** One model answer, as a loop reads it. */
interface Answer {
  text: string | null;
  calls: { id: string; name: string; arguments: Record<string, unknown> }[];
  served: boolean;
  /** The gateway gave up after refusals. */
  gave_up: boolean;
  /** The episode the answer named, or null. */
  episode: string | null;
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
    episodes: [],
    unnamed: 0,
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
      if (a.episode === null) run.unnamed++;
      else if (!run.episodes.includes(a.episode)) run.episodes.push(a.episode);
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
  res.headers.get(ANSWER_HEADERS.served) === "package";
const gaveUp = (res: Response) => res.headers.has(ANSWER_HEADERS.refused);
const episodeOf = (res: Response) => res.headers.get(ANSWER_HEADERS.episode);

/** A streamed Chat Completions answer gathered as an agent does. */
async function gatherChat(
  chunks: AsyncIterable<OpenAI.Chat.ChatCompletionChunk>,
): Promise<OpenAI.Chat.ChatCompletionMessage> {
  let content: string | null = null;
  const calls: OpenAI.Chat.ChatCompletionMessageFunctionToolCall[] = [];
  for await (const c of chunks) {
    const d = c.choices[0]?.delta;
    if (!d) continue;
    if (typeof d.content === "string") content = (content ?? "") + d.content;
    for (const t of d.tool_calls ?? []) {
      const call = calls[t.index] ??= {
        id: "",
        type: "function",
        function: { name: "", arguments: "" },
      };
      if (t.id) call.id = t.id;
      if (t.function?.name) call.function.name += t.function.name;
      if (t.function?.arguments) {
        call.function.arguments += t.function.arguments;
      }
    }
  }
  return {
    role: "assistant",
    content: content === "" ? null : content,
    refusal: null,
    ...(calls.length ? { tool_calls: calls } : {}),
  };
}

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
 * @param options Database, user messages, system prompt, greeting, streaming.
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
    ...(options.greeting
      ? [{ role: "assistant" as const, content: options.greeting }]
      : []),
  ];
  return drive(options, async () => {
    const params = { model: "scripted-replay", messages, tools: CHAT_TOOLS };
    let m: OpenAI.Chat.ChatCompletionMessage;
    let response: Response;
    if (options.stream) {
      const r = await client.chat.completions.create({
        ...params,
        stream: true,
        stream_options: { include_usage: true },
      }).withResponse();
      response = r.response;
      m = await gatherChat(r.data);
    } else {
      const r = await client.chat.completions.create(params).withResponse();
      response = r.response;
      m = r.data.choices[0].message;
    }
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
      episode: episodeOf(response),
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
 * One retail conversation through Messages (`@anthropic-ai/sdk`), whole
 * (`messages.create`) or streamed (`messages.stream`, then
 * `finalMessage()`).
 *
 * @param client The client (its base URL is the gateway's, without `/v1`).
 * @param options Database, user messages, system prompt, greeting, streaming.
 * @returns The environment, counts and the calls made.
 * @throws {RangeError} When the model asks for more than `maxRequests` answers.
 */
export function runMessagesAgent(
  client: AnthropicClient,
  options: AgentOptions,
): Promise<AgentRun> {
  const messages: { role: "user" | "assistant"; content: unknown }[] =
    options.greeting ? [{ role: "assistant", content: options.greeting }] : [];
  return drive(options, async () => {
    const params = {
      model: "scripted-replay",
      max_tokens: 4096,
      system: options.instructions,
      messages,
      tools: MESSAGES_TOOLS,
    };
    let m: AnthropicMessage;
    let response: Response;
    if (options.stream) {
      const stream = client.messages.stream(params);
      response = (await stream.withResponse()).response;
      m = await stream.finalMessage();
    } else {
      const r = await client.messages.create(params).withResponse();
      response = r.response;
      m = r.data;
    }
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
      episode: episodeOf(response),
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
