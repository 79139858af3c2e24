/**
 * Unmodified agents for the episode-identity tests: a conversation held on
 * an official client (`openai` Chat Completions or `@anthropic-ai/sdk`
 * Messages, whole or streamed) that sends no header of ours, keeps the
 * history as its SDK returns it, and notes the `x-harness-episode` each
 * answer carries; and a model for the scripted upstream that reads its
 * input (`refundModel`): a user naming an order gets `get_order`, an order's
 * amount gets `refund` of that amount, a refund gets words, anything else
 * an echo.
 *
 * @module
 */
import OpenAI from "openai";
import { Anthropic, type AnthropicBlock } from "./_anthropic_sdk.ts";
import { KEY } from "./_gateway.ts";
import type { Responder, UpstreamAnswer } from "./_upstreams.ts";

/** A client's wire. */
export type AgentWire = "openai" | "anthropic";

/** Every wire, whole and streamed. */
export const COMBOS: { wire: AgentWire; stream: boolean; label: string }[] = [
  { wire: "openai", stream: false, label: "Chat Completions" },
  { wire: "openai", stream: true, label: "Chat Completions streamed" },
  { wire: "anthropic", stream: false, label: "Messages" },
  { wire: "anthropic", stream: true, label: "Messages streamed" },
];

/** A tool call the model answered. */
export interface AgentCall {
  /** Its id. */
  id: string;
  /** Tool. */
  name: string;
  /** Arguments. */
  arguments: Record<string, unknown>;
}

/** One answer as the agent reads it. */
export interface AgentAnswer {
  /** Text, or null. */
  text: string | null;
  /** Tool calls. */
  calls: AgentCall[];
}

/** Options of {@linkcode startAgent}. */
export interface AgentOptions {
  /** The gateway's base URLs. */
  bases: { openaiBase: string; anthropicBase: string };
  /** Which client. */
  wire: AgentWire;
  /** Streamed answers. */
  stream: boolean;
  /** The system prompt. */
  system: string;
  /** The assistant's greeting, sent first (as τ²-bench's agent does). */
  greeting?: string;
  /** Client time-out (ms). @default 20000 */
  timeout?: number;
  /** The SDK's own retries. @default 0 */
  maxRetries?: number;
}

const TOOLS = [
  {
    name: "get_order",
    description: "Look an order up.",
    parameters: {
      type: "object",
      properties: { order_id: { type: "string" } },
      required: ["order_id"],
    },
  },
  {
    name: "refund",
    description: "Refund an order.",
    parameters: {
      type: "object",
      properties: {
        order_id: { type: "string" },
        amount: { type: "number" },
      },
      required: ["order_id", "amount"],
    },
  },
];

/** A conversation on an official client. */
export class Agent {
  #o: AgentOptions;
  #openai: OpenAI | null = null;
  #anthropic: ReturnType<typeof anthropicOf> | null = null;
  /** The history as sent (the wire's message shape). */
  messages: unknown[] = [];
  /** `x-harness-episode` of every response the client got, in order. */
  readonly episodes: (string | null)[] = [];

  /**
   * Create an `Agent`.
   *
   * @param o Options.
   */
  constructor(o: AgentOptions) {
    this.#o = o;
    this.rebase(o.bases);
    this.messages = o.wire === "openai"
      ? [
        { role: "system", content: o.system },
        ...(o.greeting ? [{ role: "assistant", content: o.greeting }] : []),
      ]
      : o.greeting
      ? [{ role: "assistant", content: o.greeting }]
      : [];
  }

  /**
   * Point the agent's client at another server (a restart), keeping the
   * conversation.
   *
   * @param bases The base URLs.
   */
  rebase(bases: AgentOptions["bases"]): void {
    const o = this.#o = { ...this.#o, bases };
    const fetchNoting = async (
      input: string | URL | Request,
      init?: RequestInit,
    ): Promise<Response> => {
      const res = await fetch(input, init);
      this.episodes.push(res.headers.get("x-harness-episode"));
      return res;
    };
    const common = {
      apiKey: KEY,
      maxRetries: o.maxRetries ?? 0,
      timeout: o.timeout ?? 20_000,
      fetch: fetchNoting,
    };
    this.#openai = o.wire === "openai"
      ? new OpenAI({ ...common, baseURL: o.bases.openaiBase })
      : null;
    this.#anthropic = o.wire === "anthropic"
      ? anthropicOf({ ...common, baseURL: o.bases.anthropicBase })
      : null;
  }

  /**
   * A second agent holding a copy of this one's history (same options).
   *
   * @param bases Base URLs (after a restart), else the same.
   * @returns The copy.
   */
  copy(bases?: AgentOptions["bases"]): Agent {
    const a = new Agent({ ...this.#o, ...(bases ? { bases } : {}) });
    a.messages = structuredClone(this.messages);
    return a;
  }

  /**
   * Add a user message.
   *
   * @param text What the user says.
   */
  user(text: string): void {
    this.messages.push({ role: "user", content: text });
  }

  /**
   * Send the history; the answer joins it.
   *
   * @returns The answer.
   */
  async ask(): Promise<AgentAnswer> {
    if (this.#openai) {
      const params = {
        model: "gpt-agent",
        messages: this.messages as OpenAI.ChatCompletionMessageParam[],
        tools: TOOLS.map((t) => ({ type: "function" as const, function: t })),
      };
      const c = this.#o.stream
        ? await this.#openai.chat.completions.stream(params)
          .finalChatCompletion()
        : await this.#openai.chat.completions.create(params);
      const m = c.choices[0].message;
      const calls = (m.tool_calls ?? []).filter((t) => t.type === "function");
      this.messages.push({
        role: "assistant",
        content: m.content,
        ...(calls.length ? { tool_calls: calls } : {}),
      });
      return {
        text: m.content,
        calls: calls.map((t) => ({
          id: t.id,
          name: t.function.name,
          arguments: JSON.parse(t.function.arguments || "{}"),
        })),
      };
    }
    const params = {
      model: "claude-agent",
      max_tokens: 512,
      system: this.#o.system,
      messages: this.messages,
      tools: TOOLS.map((t) => ({
        name: t.name,
        description: t.description,
        input_schema: t.parameters,
      })),
    };
    const m = this.#o.stream
      ? await this.#anthropic!.messages.stream(params).finalMessage()
      : await this.#anthropic!.messages.create(params);
    this.messages.push({ role: "assistant", content: m.content });
    const text = m.content.flatMap((b: AnthropicBlock) =>
      b.type === "text" ? [b.text] : []
    ).join("");
    return {
      text: text === "" ? null : text,
      calls: m.content.flatMap((b: AnthropicBlock) =>
        b.type === "tool_use"
          ? [{ id: b.id, name: b.name, arguments: b.input }]
          : []
      ),
    };
  }

  /**
   * Send the tools' results.
   *
   * @param rs Each call's id and the result's text.
   */
  results(rs: { id: string; content: string }[]): void {
    if (this.#openai) {
      for (const r of rs) {
        this.messages.push({
          role: "tool",
          tool_call_id: r.id,
          content: r.content,
        });
      }
      return;
    }
    this.messages.push({
      role: "user",
      content: rs.map((r) => ({
        type: "tool_result",
        tool_use_id: r.id,
        content: r.content,
      })),
    });
  }

  /**
   * One user turn: the user's words, then the model's calls run against
   * `env` until it answers in words.
   *
   * @param text What the user says.
   * @param env Runs a call: its result's text.
   * @returns The words it ended with.
   */
  async turn(
    text: string,
    env: (call: AgentCall) => string = () => "{}",
  ): Promise<string | null> {
    this.user(text);
    for (let i = 0; i < 8; i++) {
      const a = await this.ask();
      if (a.calls.length === 0) return a.text;
      this.results(a.calls.map((c) => ({ id: c.id, content: env(c) })));
    }
    throw new Error("the model kept calling tools");
  }
}

function anthropicOf(o: {
  apiKey: string;
  maxRetries: number;
  timeout: number;
  fetch: typeof fetch;
  baseURL: string;
}) {
  return new Anthropic(o);
}

/**
 * Start an agent.
 *
 * @param o Options.
 * @returns The agent.
 */
export function startAgent(o: AgentOptions): Agent {
  return new Agent(o);
}

/** The last turn of a request as the model reads it. */
function lastTurn(
  json: Record<string, unknown> | null,
): { user: string } | { results: string[] } | null {
  const messages = Array.isArray(json?.messages) ? json.messages : [];
  const last = messages.at(-1) as Record<string, unknown> | undefined;
  if (!last) return null;
  if (last.role === "tool") {
    const results: string[] = [];
    for (let i = messages.length - 1; i >= 0; i--) {
      const m = messages[i] as Record<string, unknown>;
      if (m.role !== "tool") break;
      results.unshift(String(m.content));
    }
    return { results };
  }
  if (last.role !== "user") return null;
  if (typeof last.content === "string") return { user: last.content };
  const blocks = Array.isArray(last.content) ? last.content : [];
  const results = blocks.filter((b) => b?.type === "tool_result").map((b) =>
    typeof b.content === "string" ? b.content : JSON.stringify(b.content)
  );
  if (results.length) return { results };
  return {
    user: blocks.filter((b) => b?.type === "text").map((b) => b.text).join(""),
  };
}

/**
 * A model that reads its input: "order N" → `get_order`; an order with an
 * `amount` → `refund` of it; a refund → "Refunded A."; other words → "You
 * said: …" (the same words get the same answer). Call ids are the
 * upstream's (unique per exchange).
 */
export const refundModel: Responder = ({ json }) => {
  const t = lastTurn(json);
  if (t === null) return { text: "Hello." };
  if ("user" in t) {
    const m = /order (\w+)/.exec(t.user);
    return m
      ? { toolCalls: [{ name: "get_order", arguments: { order_id: m[1] } }] }
      : { text: `You said: ${t.user}` };
  }
  const r = JSON.parse(t.results[0] ?? "{}");
  const answer: UpstreamAnswer = typeof r.refunded === "number"
    ? { text: `Refunded ${r.refunded}.` }
    : typeof r.amount === "number"
    ? {
      toolCalls: [{
        name: "refund",
        arguments: { order_id: r.order_id, amount: r.amount },
      }],
    }
    : { text: "Done." };
  return answer;
};

/**
 * The retail side of `refundModel`'s calls: an order costs `amount`.
 *
 * @param amount The order's amount in this run.
 * @returns Runs a call.
 */
export function orders(amount: number): (call: AgentCall) => string {
  return (c) =>
    c.name === "get_order"
      ? JSON.stringify({ order_id: c.arguments.order_id, amount })
      : JSON.stringify({ refunded: c.arguments.amount });
}
