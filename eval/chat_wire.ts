/**
 * The OpenAI Chat Completions request as the scripted model server reads
 * it: checked field by field (a malformed request is a
 * {@linkcode ChatRequestError} with OpenAI's error fields) and read, by the
 * OpenAI Chat wire's own reader, into the neutral {@linkcode ChatMessage}s
 * the walker reads.
 *
 * @module
 */
import type { ChatMessage } from "../lib/models/chat_types.ts";
import { chatMessagesOfOpenAi } from "../lib/model_gateway/wires/openai_chat/chat.ts";
import type { WireMessage } from "./token_count.ts";

/** A request the server cannot read, with the OpenAI error fields. */
export class ChatRequestError extends TypeError {
  /** HTTP status. */
  readonly status: number;
  /** The offending parameter, if one. */
  readonly param: string | null;
  /**
   * Create a `ChatRequestError`.
   *
   * @param message What is wrong.
   * @param options Status (default 400) and parameter.
   */
  constructor(
    message: string,
    options: { status?: number; param?: string | null } = {},
  ) {
    super(message);
    this.name = "ChatRequestError";
    this.status = options.status ?? 400;
    this.param = options.param ?? null;
  }
}

/** A checked Chat Completions request (the fields the server uses). */
export interface WireRequest {
  /** Model name (echoed in the answer). */
  model: string;
  /** The conversation. */
  messages: WireMessage[];
  /** Tool definitions as sent. */
  tools?: unknown[];
  /** Structured-output format as sent. */
  response_format?: unknown;
}

const ROLES = new Set(["system", "developer", "user", "assistant", "tool"]);

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function checkMessage(m: unknown, i: number): WireMessage {
  const at = `messages[${i}]`;
  const bad = (what: string, param = at) =>
    new ChatRequestError(`${at}: ${what}`, { param });
  if (!isObject(m)) throw bad("must be an object");
  if (typeof m.role !== "string" || !ROLES.has(m.role)) {
    throw bad(
      `role must be one of ${[...ROLES].join(", ")}, got ${
        JSON.stringify(m.role)
      }`,
      `${at}.role`,
    );
  }
  const c = m.content;
  const contentOk = c === undefined || c === null || typeof c === "string" ||
    (Array.isArray(c) && c.every((p) => isObject(p)));
  if (!contentOk) {
    throw bad("content must be a string, an array of parts or null");
  }
  if (m.role === "tool" && typeof m.tool_call_id !== "string") {
    throw bad(
      "a tool message needs a string tool_call_id",
      `${at}.tool_call_id`,
    );
  }
  if (m.tool_calls !== undefined && m.tool_calls !== null) {
    if (m.role !== "assistant" || !Array.isArray(m.tool_calls)) {
      throw bad("tool_calls must be an array on an assistant message");
    }
    m.tool_calls.forEach((t, k) => {
      const f = isObject(t) ? t.function : undefined;
      if (
        !isObject(t) || typeof t.id !== "string" || !isObject(f) ||
        typeof f.name !== "string" || typeof f.arguments !== "string"
      ) {
        throw bad(
          `tool_calls[${k}] needs id, function.name and function.arguments (a JSON string)`,
          `${at}.tool_calls[${k}]`,
        );
      }
    });
  }
  return m as unknown as WireMessage;
}

/**
 * Check a parsed Chat Completions request body.
 *
 * @param body The parsed JSON body.
 * @returns The request.
 * @throws {ChatRequestError} When a required field is missing or malformed, or streaming or `n > 1` is asked for.
 */
export function parseChatRequest(body: unknown): WireRequest {
  if (!isObject(body)) {
    throw new ChatRequestError("The request body must be a JSON object");
  }
  if (typeof body.model !== "string" || body.model === "") {
    throw new ChatRequestError("model must be a non-empty string", {
      param: "model",
    });
  }
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    throw new ChatRequestError("messages must be a non-empty array", {
      param: "messages",
    });
  }
  const messages = body.messages.map(checkMessage);
  if (body.tools !== undefined && !Array.isArray(body.tools)) {
    throw new ChatRequestError("tools must be an array", { param: "tools" });
  }
  if (body.stream === true) {
    throw new ChatRequestError(
      "stream is not supported by the scripted model; send stream: false",
      { param: "stream" },
    );
  }
  if (body.n !== undefined && body.n !== null && body.n !== 1) {
    throw new ChatRequestError("n must be 1 for the scripted model", {
      param: "n",
    });
  }
  return {
    model: body.model,
    messages,
    ...(body.tools ? { tools: body.tools as unknown[] } : {}),
    ...(body.response_format !== undefined
      ? { response_format: body.response_format }
      : {}),
  };
}

/**
 * The chat contract's messages for wire messages, read by the OpenAI Chat
 * wire's reader (`lib/model_gateway/wires/openai_chat/chat.ts`): `developer`
 * becomes `system`; a tool message takes its name from the call it answers.
 *
 * @param messages Wire messages (checked by {@linkcode parseChatRequest}).
 * @returns Chat messages.
 */
export function chatMessagesOf(
  messages: readonly WireMessage[],
): ChatMessage[] {
  return chatMessagesOfOpenAi(messages);
}
