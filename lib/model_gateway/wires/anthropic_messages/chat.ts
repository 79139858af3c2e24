/**
 * The neutral chat shape (`../../chat_shape.ts`) on Anthropic Messages: the
 * body of a {@linkcode ChatRequest} (system text apart, strictly
 * alternating user/assistant turns of content blocks, tools with
 * `input_schema`, and structured output as a forced tool), and an answer
 * read back into a {@linkcode ChatResponse} through this wire's reader
 * ({@linkcode readAnthropicChatAnswer}). The Anthropic binding
 * (`lib/models/anthropic_messages.ts`) uses these; the gateway records
 * through `read.ts` itself.
 *
 * @module
 */
import type {
  ChatMessage,
  ChatRequest,
  ChatResponse,
  ChatToolCall,
  JsonSchema,
} from "../../chat_shape.ts";
import { isObject, WireShapeError } from "../../wire_types.ts";
import { anthropicMessagesWire } from "./read.ts";

/** Default `max_tokens` (the Messages API requires one). */
export const DEFAULT_ANTHROPIC_MAX_TOKENS = 4096;

type Block = Record<string, unknown>;
interface Turn {
  role: "user" | "assistant";
  content: Block[];
}

/** How the structured output travels: the tool's name, and whether its input is wrapped. */
export interface OutputTool {
  /** Tool name. */
  name: string;
  /** True when the schema was not an object schema and sits under `value`. */
  wrapped: boolean;
}

/**
 * Turn chat messages into the `system` text and alternating turns. Tool
 * results go into a user turn (consecutive ones merged, ahead of any user
 * text in that turn); consecutive messages of one role are merged.
 *
 * @param messages The conversation.
 * @returns `system` (null when none) and the turns.
 */
export function anthropicMessages(
  messages: ChatMessage[],
): { system: string | null; messages: Turn[] } {
  const system: string[] = [];
  const turns: Turn[] = [];
  const add = (role: Turn["role"], blocks: Block[]) => {
    if (blocks.length === 0) return;
    const last = turns.at(-1);
    if (last && last.role === role) last.content.push(...blocks);
    else turns.push({ role, content: blocks });
  };
  for (const m of messages) {
    switch (m.role) {
      case "system":
        system.push(m.content);
        break;
      case "user":
        add("user", [{ type: "text", text: m.content }]);
        break;
      case "tool":
        add("user", [{
          type: "tool_result",
          tool_use_id: m.tool_call_id,
          content: m.content,
        }]);
        break;
      case "assistant":
        add("assistant", [
          ...(m.content ? [{ type: "text", text: m.content }] : []),
          ...(m.tool_calls ?? []).map((c) => ({
            type: "tool_use",
            id: c.id,
            name: c.name,
            input: c.arguments ?? {},
          })),
        ]);
        break;
    }
  }
  for (const t of turns) {
    if (t.role === "user") {
      t.content = [
        ...t.content.filter((b) => b.type === "tool_result"),
        ...t.content.filter((b) => b.type !== "tool_result"),
      ];
    }
  }
  return {
    system: system.length ? system.join("\n\n") : null,
    messages: turns,
  };
}

function outputToolName(name: string, taken: Set<string>): string {
  let n = name.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64) || "output";
  while (taken.has(n)) n = `${n.slice(0, 57)}_output`;
  return n;
}

/**
 * Build the Messages API body of a request, and say how structured output
 * travels (null when none was asked for).
 *
 * @param model The API's model name.
 * @param request The request.
 * @returns The body and the output tool.
 */
export function anthropicBody(
  model: string,
  request: ChatRequest,
): { body: Record<string, unknown>; output: OutputTool | null } {
  const { system, messages } = anthropicMessages(request.messages);
  const body: Record<string, unknown> = {
    model,
    max_tokens: request.max_tokens ?? DEFAULT_ANTHROPIC_MAX_TOKENS,
    ...(system !== null ? { system } : {}),
    messages,
  };
  const tools: Block[] = (request.tools ?? []).map((t) => ({
    name: t.name,
    ...(t.description ? { description: t.description } : {}),
    input_schema: t.parameters,
  }));
  const choice = request.tool_choice ?? "auto";
  let toolChoice: Block | null = tools.length === 0 ? null : {
    type: choice === "required" ? "any" : choice,
  };
  let output: OutputTool | null = null;
  const rf = request.response_format;
  if (rf) {
    const name = outputToolName(
      rf.name,
      new Set((request.tools ?? []).map((t) => t.name)),
    );
    const wrapped = rf.schema.type !== "object";
    const schema: JsonSchema = wrapped
      ? {
        type: "object",
        properties: { value: rf.schema },
        required: ["value"],
      }
      : rf.schema;
    output = { name, wrapped };
    const offered = tools.length > 0 && choice !== "none";
    tools.push({
      name,
      description:
        `Give your final answer by calling this tool: its input is the answer (${rf.name}).`,
      input_schema: schema,
    });
    // With other tools on offer the model must call one of them or answer
    // through this one (like OpenAI's tools + response_format); alone, it
    // is forced.
    toolChoice = offered ? { type: "any" } : { type: "tool", name };
  }
  if (tools.length > 0) {
    body.tools = tools;
    body.tool_choice = toolChoice;
  }
  if (request.temperature !== undefined) body.temperature = request.temperature;
  return { body, output };
}

/**
 * Map a `stop_reason` to the contract's finish reasons.
 *
 * @param stop The API's stop reason.
 * @returns `stop`, `tool_calls`, `length`, `refusal`, or the API's word.
 */
export function finishReason(stop: unknown): string {
  switch (stop) {
    case "end_turn":
    case "stop_sequence":
      return "stop";
    case "tool_use":
      return "tool_calls";
    case "max_tokens":
      return "length";
    case "refusal":
      return "refusal";
    default:
      return typeof stop === "string" ? stop : "stop";
  }
}

/** A Messages answer read as a chat answer. */
export interface AnthropicChatAnswer {
  /** The answer. */
  answer: ChatResponse;
  /**
   * Structured output was asked for, the model did not answer through its
   * tool, and `content` is its text: the caller checks that it is JSON.
   */
  unchecked_output: boolean;
}

/**
 * Read a whole Messages answer as a chat answer: checked strictly (a block
 * without a type, a text block without text, a tool use without a name is
 * not this API's answer), then read by this wire's reader (model, stop
 * reason, usage, text). The structured output's tool call, when asked for,
 * is the answer's content (as JSON text) and not a tool call.
 *
 * @param raw The parsed answer.
 * @param options The model name to report when the answer names none, and
 *   how the structured output travels (null when none was asked for).
 * @returns The answer.
 * @throws {WireShapeError} Saying what is not the Messages shape.
 */
export function readAnthropicChatAnswer(
  raw: unknown,
  options: { model: string; output: OutputTool | null },
): AnthropicChatAnswer {
  const { output } = options;
  const bad = (what: string): never => {
    throw new WireShapeError(what);
  };
  if (!isObject(raw)) return bad("not a JSON object");
  if (!Array.isArray(raw.content)) return bad("no content list");
  let texts = 0;
  const tool_calls: ChatToolCall[] = [];
  let structured: string | null = null;
  raw.content.forEach((b, i) => {
    if (!isObject(b) || typeof b.type !== "string") {
      return bad(`content[${i}] is not a block`);
    }
    if (b.type === "text") {
      if (typeof b.text !== "string") {
        return bad(`content[${i}].text is not text`);
      }
      texts++;
    } else if (b.type === "tool_use") {
      if (typeof b.name !== "string") {
        return bad(`content[${i}].name is not text`);
      }
      const rawArgs = JSON.stringify(b.input ?? null);
      if (output && b.name === output.name) {
        const v = output.wrapped && isObject(b.input) ? b.input.value : b.input;
        structured = JSON.stringify(v ?? null);
        return;
      }
      tool_calls.push({
        id: typeof b.id === "string" && b.id ? b.id : `toolu_${i}`,
        name: b.name,
        ...(isObject(b.input) ? { arguments: b.input } : {
          arguments: null,
          arguments_error: `the input is not an object (${rawArgs})`,
        }),
        raw_arguments: rawArgs,
      });
    }
  });
  const read = anthropicMessagesWire.response(raw);
  // Every text block was checked to be text: the reader joined them all.
  const text = texts ? read.text : null;
  let finish = finishReason(read.stop_reason);
  let refusal: string | null = null;
  let content: string | null = structured ?? text;
  let unchecked = false;
  if (finish === "refusal") {
    refusal = text || "The model refused to answer (stop_reason refusal)";
    content = null;
  } else if (structured !== null && tool_calls.length === 0) {
    finish = "stop";
  } else if (output && structured === null && content !== null) {
    // a server that ignored the forced tool: its text must be the JSON
    unchecked = true;
  }
  const u = read.usage;
  const usage = u && u.input_tokens !== null
    ? {
      prompt_tokens: u.input_tokens + (u.cache_creation_input_tokens ?? 0) +
        (u.cache_read_input_tokens ?? 0),
      completion_tokens: u.output_tokens ?? 0,
    }
    : null;
  return {
    answer: {
      content,
      tool_calls,
      finish_reason: finish,
      refusal,
      usage,
      model: read.model ?? options.model,
    },
    unchecked_output: unchecked,
  };
}
