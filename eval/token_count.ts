/**
 * Token counts of OpenAI Chat Completions requests and answers, with a real
 * tokenizer: `npm:gpt-tokenizer` 4.0.0, encoding `o200k_base` (the GPT-4o,
 * GPT-4.1 and o-series encoding; the package's main entry is that encoding).
 *
 * The library's `encodeChat` takes only text messages (no tool calls, no
 * tool definitions), so the chat framing is counted the way OpenAI's
 * cookbook ("How to count tokens with tiktoken") does it, with the same
 * constants the library's own `countChatCompletionTokens` uses:
 *
 * - each message: 3 tokens of framing + its role + its text (text parts
 *   joined) + `name` when present (+1);
 * - each tool call of an assistant message: its name + its arguments
 *   exactly as the JSON string sent + 3 tokens of framing;
 * - the request: 3 tokens priming the reply, plus the `tools` array and the
 *   `response_format` as sent, each serialized with `JSON.stringify`.
 *
 * A tool message's `tool_call_id` and a call's `id` are not counted. An
 * answer counts its text plus, per tool call, its name and JSON arguments.
 * The absolute figures differ somewhat from what OpenAI bills (it renders
 * tool definitions in its own format, not JSON); the same counter is
 * applied to every arm of a comparison, so differences between arms are
 * fair.
 *
 * @module
 */
import { countTokens as countO200k } from "gpt-tokenizer";
import type { OpenAiChatWireMessage } from "../lib/model_gateway/wires/openai_chat/chat.ts";

/** The tokenizer's encoding. */
export const TOKEN_ENCODING = "o200k_base";

/** Framing tokens per message (cookbook `tokens_per_message`). */
export const MESSAGE_OVERHEAD = 3;
/** Extra tokens when a message has a `name` (cookbook `tokens_per_name`). */
export const NAME_OVERHEAD = 1;
/** Framing tokens per tool call of an assistant message. */
export const TOOL_CALL_OVERHEAD = 3;
/** Tokens priming the reply (`<|start|>assistant<|message|>`). */
export const REPLY_PRIMING = 3;

const NO_SPECIAL: { disallowedSpecial: Set<string> } = {
  disallowedSpecial: new Set(),
};

/** A message as the Chat Completions wire format carries it (the gateway's wire type). */
export type WireMessage = OpenAiChatWireMessage;

/** The parts of a request that are counted. */
export interface PromptInput {
  /** The conversation. */
  messages: readonly WireMessage[];
  /** Tool definitions as sent. */
  tools?: readonly unknown[];
  /** Structured-output format as sent. */
  response_format?: unknown;
}

/** The parts of an answer that are counted. */
export interface CompletionInput {
  /** The answer's text. */
  content: string | null;
  /** Its tool calls (name and the JSON arguments string). */
  tool_calls?: ReadonlyArray<{ name: string; arguments: string }>;
}

/** Prompt and completion tokens of one request. */
export interface TokenUsage {
  /** Tokens of the request. */
  prompt_tokens: number;
  /** Tokens of the answer. */
  completion_tokens: number;
}

/**
 * The text of a message's content: a string as is, text parts joined, none
 * for null.
 *
 * @param content The wire content.
 * @returns The text.
 */
export function contentText(content: WireMessage["content"]): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((p) => typeof p?.text === "string" ? p.text : "").join(
    "",
  );
}

/** Options of {@linkcode TokenCounter}. */
export interface TokenCounterOptions {
  /**
   * Most distinct texts whose count is remembered (the memo is emptied
   * when full). A conversation resends every earlier message on each
   * request, so remembering them makes a request cost only its new text.
   * @default 20000
   */
  maxMemo?: number;
}

/**
 * Counts tokens of requests and answers (o200k_base), remembering the
 * counts of texts it has seen.
 */
export class TokenCounter {
  readonly #memo = new Map<string, number>();
  readonly #maxMemo: number;

  /**
   * Create a counter.
   *
   * @param options Memo size.
   * @throws {RangeError} When `maxMemo` is negative or not an integer.
   */
  constructor(options: TokenCounterOptions = {}) {
    const max = options.maxMemo ?? 20_000;
    if (!Number.isInteger(max) || max < 0) {
      throw new RangeError(
        `maxMemo must be a non-negative integer, got ${JSON.stringify(max)}`,
      );
    }
    this.#maxMemo = max;
  }

  /**
   * Tokens of a text (special-token strings count as plain text).
   *
   * @param text The text.
   * @returns Its o200k_base token count.
   */
  text(text: string): number {
    if (text === "") return 0;
    const known = this.#memo.get(text);
    if (known !== undefined) return known;
    const n = countO200k(text, NO_SPECIAL);
    if (this.#maxMemo > 0) {
      if (this.#memo.size >= this.#maxMemo) this.#memo.clear();
      this.#memo.set(text, n);
    }
    return n;
  }

  /**
   * Prompt tokens of a request: each message's framing, role, text, name
   * and tool calls, the reply priming, and the tools and response format
   * as JSON (see the module doc).
   *
   * @param request The request's messages, tools and response format.
   * @returns The prompt token count.
   */
  prompt(request: PromptInput): number {
    let total = REPLY_PRIMING;
    for (const m of request.messages) {
      total += MESSAGE_OVERHEAD + this.text(m.role) +
        this.text(contentText(m.content));
      if (m.name) total += NAME_OVERHEAD + this.text(m.name);
      for (const c of m.tool_calls ?? []) {
        total += TOOL_CALL_OVERHEAD + this.text(c.function.name) +
          this.text(c.function.arguments);
      }
    }
    if (request.tools?.length) {
      total += this.text(JSON.stringify(request.tools));
    }
    if (request.response_format !== undefined) {
      total += this.text(JSON.stringify(request.response_format));
    }
    return total;
  }

  /**
   * Completion tokens of an answer: its text plus each tool call's name
   * and JSON arguments.
   *
   * @param answer The answer.
   * @returns The completion token count.
   */
  completion(answer: CompletionInput): number {
    let total = this.text(answer.content ?? "");
    for (const c of answer.tool_calls ?? []) {
      total += this.text(c.name) + this.text(c.arguments);
    }
    return total;
  }
}

/**
 * Count one request and its answer with a fresh {@linkcode TokenCounter}.
 *
 * @example
 * ```ts
 * import { countTokens } from "./token_count.ts";
 * import { ok } from "node:assert/strict";
 * const usage = countTokens(
 *   { messages: [{ role: "user", content: "Hello" }] },
 *   { content: "Hi! How can I help you today?" },
 * );
 * ok(usage.prompt_tokens > 0 && usage.completion_tokens > 0);
 * ```
 *
 * @param request The request's messages, tools and response format.
 * @param answer The answer's text and tool calls.
 * @returns Prompt and completion tokens.
 */
export function countTokens(
  request: PromptInput,
  answer: CompletionInput,
): TokenUsage {
  const counter = new TokenCounter({ maxMemo: 0 });
  return {
    prompt_tokens: counter.prompt(request),
    completion_tokens: counter.completion(answer),
  };
}
