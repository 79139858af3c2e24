/**
 * The neutral chat shape (`../../chat_shape.ts`) on OpenAI Chat
 * Completions: the body of a {@linkcode ChatRequest}
 * ({@linkcode openaiChatBody}), an answer read back into a
 * {@linkcode ChatResponse} ({@linkcode readOpenAiChatAnswer}, through this
 * wire's reader), and a request's messages read as chat messages
 * ({@linkcode chatMessagesOfOpenAi}, through the same reader). The OpenAI
 * binding (`lib/models/openai_chat.ts`) and the evaluation's scripted model
 * server use these; the gateway records through `read.ts` itself.
 *
 * @module
 */
import {
  type ChatMessage,
  type ChatRequest,
  type ChatResponse,
  type ChatToolCall,
  chatToolCallOf,
  parseToolArguments,
} from "../../chat_shape.ts";
import { isObject, WireShapeError } from "../../wire_types.ts";
import { openaiChatWire } from "./read.ts";

/** How {@linkcode openaiChatBody} writes a request. */
export interface OpenAiChatBodyOptions {
  /** The API's model name. */
  model: string;
  /** Which field carries `max_tokens` (OpenAI's reasoning models read only `max_completion_tokens`). */
  maxTokensField: "max_tokens" | "max_completion_tokens";
}

/**
 * The Chat Completions body of a chat request (without the key).
 *
 * @param request The neutral request.
 * @param options Model name and the `max_tokens` field.
 * @returns The JSON body.
 */
export function openaiChatBody(
  request: ChatRequest,
  options: OpenAiChatBodyOptions,
): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: options.model,
    messages: request.messages.map(openaiChatMessage),
  };
  if (request.tools && request.tools.length > 0) {
    body.tools = request.tools.map((t) => ({
      type: "function",
      function: {
        name: t.name,
        ...(t.description ? { description: t.description } : {}),
        parameters: t.parameters,
      },
    }));
    if (request.tool_choice) body.tool_choice = request.tool_choice;
  }
  if (request.response_format) {
    body.response_format = {
      type: "json_schema",
      json_schema: {
        name: request.response_format.name,
        schema: request.response_format.schema,
        strict: true,
      },
    };
  }
  if (request.max_tokens !== undefined) {
    body[options.maxTokensField] = request.max_tokens;
  }
  if (request.temperature !== undefined) {
    body.temperature = request.temperature;
  }
  return body;
}

/**
 * One chat message as a Chat Completions message (a call's arguments as
 * JSON text: re-serialized when they parsed, else as the model sent them).
 *
 * @param m The chat message.
 * @returns The wire message.
 */
export function openaiChatMessage(m: ChatMessage): Record<string, unknown> {
  switch (m.role) {
    case "system":
    case "user":
      return { role: m.role, content: m.content };
    case "tool":
      return { role: "tool", tool_call_id: m.tool_call_id, content: m.content };
    case "assistant":
      return {
        role: "assistant",
        content: m.content,
        ...(m.tool_calls && m.tool_calls.length > 0
          ? {
            tool_calls: m.tool_calls.map((c) => ({
              id: c.id,
              type: "function",
              function: {
                name: c.name,
                arguments: c.arguments === null
                  ? c.raw_arguments
                  : JSON.stringify(c.arguments),
              },
            })),
          }
          : {}),
      };
  }
}

/**
 * Read a whole Chat Completions answer as a chat answer: checked strictly
 * (a call without a function or a name, content that is not text, is not
 * this API's answer), then read by this wire's reader (model, finish
 * reason, usage, text); the calls keep their arguments' text as sent.
 *
 * @param raw The parsed answer.
 * @param model The model name to report when the answer names none.
 * @returns The answer.
 * @throws {WireShapeError} Saying what is not the Chat Completions shape.
 */
export function readOpenAiChatAnswer(
  raw: unknown,
  model: string,
): ChatResponse {
  const bad = (what: string): never => {
    throw new WireShapeError(what);
  };
  if (!isObject(raw)) return bad("not a JSON object");
  const choices = raw.choices;
  if (!Array.isArray(choices) || choices.length === 0) {
    return bad("no choices");
  }
  const choice = choices[0];
  if (!isObject(choice) || !isObject(choice.message)) {
    return bad("no message in choices[0]");
  }
  const msg = choice.message;
  if (msg.content != null && typeof msg.content !== "string") {
    return bad("message.content is not text");
  }
  const rawCalls = msg.tool_calls ?? [];
  if (!Array.isArray(rawCalls)) {
    return bad("message.tool_calls is not a list");
  }
  const tool_calls: ChatToolCall[] = rawCalls.map((c, i) => {
    if (!isObject(c) || !isObject(c.function)) {
      return bad(`tool_calls[${i}] has no function`);
    }
    const f = c.function;
    if (typeof f.name !== "string") {
      return bad(`tool_calls[${i}].function.name is not text`);
    }
    const rawArgs = typeof f.arguments === "string"
      ? f.arguments
      : f.arguments === undefined
      ? ""
      : JSON.stringify(f.arguments);
    return {
      id: typeof c.id === "string" && c.id ? c.id : `call_${i}`,
      name: f.name,
      ...parseToolArguments(rawArgs),
      raw_arguments: rawArgs,
    };
  });
  const read = openaiChatWire.response(raw);
  const refusal = typeof msg.refusal === "string" && msg.refusal
    ? msg.refusal
    : null;
  const u = read.usage;
  return {
    content: msg.content == null ? null : read.text,
    tool_calls,
    finish_reason: refusal
      ? "refusal"
      : read.stop_reason ?? (tool_calls.length > 0 ? "tool_calls" : "stop"),
    refusal,
    usage: u && u.input_tokens !== null
      ? {
        prompt_tokens: u.input_tokens,
        completion_tokens: u.output_tokens ?? 0,
      }
      : null,
    model: read.model ?? model,
  };
}

/** A Chat Completions message as the evaluation's scripted server checked it. */
export interface OpenAiChatWireMessage {
  /** `system`, `developer`, `user`, `assistant` or `tool`. */
  role: string;
  /** Text, text parts, or null. */
  content?: string | null | ReadonlyArray<{ type?: string; text?: string }>;
  /** Participant name. */
  name?: string;
  /** Tool calls of an assistant message (arguments as JSON text). */
  tool_calls?: ReadonlyArray<
    { id?: string; function: { name: string; arguments: string } }
  >;
  /** The call a tool message answers. */
  tool_call_id?: string;
}

/**
 * A request's messages as chat messages, read by this wire's reader
 * (`developer` is `system`; text parts joined as the gateway joins them; an
 * assistant's `null` content stays null; a call keeps its arguments' text as
 * sent; a tool message takes its name from the call it answers).
 *
 * @param messages The request's `messages`.
 * @returns Chat messages.
 * @throws {WireShapeError} When a message has no role.
 */
export function chatMessagesOfOpenAi(
  messages: readonly OpenAiChatWireMessage[],
): ChatMessage[] {
  // The scripted server keeps no message hashes: "" stands for each.
  const read = openaiChatWire.request(
    { messages },
    messages.map(() => ""),
  ).messages;
  const names = new Map<string, string>();
  return read.map((n, i): ChatMessage => {
    const m = messages[i];
    switch (n.role) {
      case "assistant": {
        const sent = m.tool_calls ?? [];
        // A legacy `function_call`, which the reader lists first, has no text kept.
        const legacy = n.tool_calls.length - sent.length;
        const calls = n.tool_calls.map((c, k) => {
          names.set(c.id, c.name);
          return chatToolCallOf(c, sent[k - legacy]?.function.arguments);
        });
        return {
          role: "assistant",
          content: m.content === null || m.content === undefined
            ? null
            : n.text,
          ...(calls.length ? { tool_calls: calls } : {}),
        };
      }
      case "tool": {
        const r = n.tool_results[0];
        return {
          role: "tool",
          tool_call_id: r.id,
          name: names.get(r.id) ?? m.name ?? "",
          content: r.text,
        };
      }
      case "user":
        return { role: "user", content: n.text };
      default:
        return { role: "system", content: n.text };
    }
  });
}
