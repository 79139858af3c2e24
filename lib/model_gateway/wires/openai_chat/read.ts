/**
 * OpenAI Chat Completions (`POST /v1/chat/completions`) as the gateway
 * reads it: requests, whole answers and streamed chunks.
 *
 * @module
 */
import type { ExposedTool } from "../../../trace/tool_events.ts";
import { messageHash } from "../../message_hash.ts";
import {
  exposedTool,
  isObject,
  type NormMessage,
  type NormResponse,
  type NormToolCall,
  type NormUsage,
  numberOrNull,
  readArguments,
  type StreamAccumulator,
  type WireReader,
  WireShapeError,
} from "../../wire_types.ts";

/** Request fields kept as the exchange's parameters. */
const PARAMS = [
  "temperature",
  "top_p",
  "max_tokens",
  "max_completion_tokens",
  "tool_choice",
  "parallel_tool_calls",
  "response_format",
  "stop",
  "n",
  "seed",
  "reasoning_effort",
  "stream_options",
  "frequency_penalty",
  "presence_penalty",
];

/** Text of a content value: a string, or text parts joined. */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((p) =>
      isObject(p) && typeof p.text === "string"
        ? p.text
        : isObject(p) && typeof p.refusal === "string"
        ? p.refusal
        : ""
    )
    .filter((t) => t !== "")
    .join("\n");
}

/**
 * A legacy `function_call` (the API before `tool_calls`) as a tool call:
 * its id is the function's name, as the `function` message answering it
 * names it.
 */
function legacyCall(raw: unknown): NormToolCall[] {
  if (!isObject(raw) || typeof raw.name !== "string") return [];
  return [{ id: raw.name, name: raw.name, ...readArguments(raw.arguments) }];
}

function callsOf(raw: unknown, legacy?: unknown): NormToolCall[] {
  const out: NormToolCall[] = legacyCall(legacy);
  if (!Array.isArray(raw)) return out;
  raw.forEach((c, i) => {
    if (!isObject(c)) return;
    const fn = isObject(c.function) ? c.function : {};
    if (typeof fn.name !== "string") return;
    out.push({
      id: typeof c.id === "string" ? c.id : `call_${i}`,
      name: fn.name,
      ...readArguments(fn.arguments),
    });
  });
  return out;
}

function messageOf(m: unknown, i: number, hash?: string): NormMessage {
  if (!isObject(m) || typeof m.role !== "string") {
    throw new WireShapeError(`messages[${i}] has no role`);
  }
  const role = m.role === "developer" || m.role === "system"
    ? "system"
    : m.role === "assistant"
    ? "assistant"
    : m.role === "tool" || m.role === "function"
    ? "tool"
    : "user";
  const text = contentText(m.content);
  return {
    role,
    text: role === "tool" ? "" : text,
    tool_calls: role === "assistant"
      ? callsOf(m.tool_calls, m.function_call)
      : [],
    tool_results: role === "tool"
      ? [{
        id: typeof m.tool_call_id === "string"
          ? m.tool_call_id
          : typeof m.name === "string"
          ? m.name
          : `result_${i}`,
        text,
        is_error: false,
      }]
      : [],
    hash: hash ?? messageHash(m),
  };
}

function toolsOf(body: Record<string, unknown>): ExposedTool[] {
  const out: ExposedTool[] = [];
  const tools = Array.isArray(body.tools) ? body.tools : [];
  for (const t of tools) {
    const fn = isObject(t) && isObject(t.function) ? t.function : null;
    if (!fn || typeof fn.name !== "string") continue;
    out.push(
      exposedTool(fn.name, {
        description: fn.description,
        schema: fn.parameters,
      }),
    );
  }
  return out;
}

/** Usage of a chat answer. */
export function chatUsage(u: unknown): NormUsage | null {
  if (!isObject(u)) return null;
  const input = numberOrNull(u.prompt_tokens);
  const output = numberOrNull(u.completion_tokens);
  const details = isObject(u.prompt_tokens_details)
    ? u.prompt_tokens_details
    : {};
  return {
    input_tokens: input,
    output_tokens: output,
    cache_read_input_tokens: numberOrNull(details.cached_tokens),
    total_tokens: numberOrNull(u.total_tokens) ??
      (input ?? 0) + (output ?? 0),
  };
}

/** Streamed chat chunks, gathered. */
class ChatStream implements StreamAccumulator {
  #id: string | null = null;
  #model: string | null = null;
  #text = "";
  #calls: { id: string; name: string; args: string }[] = [];
  /** A legacy `function_call`, streamed. */
  #legacy: { name: string; args: string } | null = null;
  #stop: string | null = null;
  #usage: NormUsage | null = null;
  complete = false;

  add(_event: string | null, data: string): void {
    if (data === "[DONE]") {
      this.complete = true;
      return;
    }
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch {
      return;
    }
    if (!isObject(chunk)) return;
    if (typeof chunk.id === "string") this.#id ??= chunk.id;
    if (typeof chunk.model === "string") this.#model ??= chunk.model;
    if (chunk.usage) this.#usage = chatUsage(chunk.usage) ?? this.#usage;
    const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
    for (const c of choices) {
      if (!isObject(c) || (c.index ?? 0) !== 0) continue;
      if (typeof c.finish_reason === "string") this.#stop = c.finish_reason;
      const d = isObject(c.delta) ? c.delta : {};
      if (typeof d.content === "string") this.#text += d.content;
      if (isObject(d.function_call)) {
        const f = d.function_call;
        const l = this.#legacy ??= { name: "", args: "" };
        if (typeof f.name === "string") l.name += f.name;
        if (typeof f.arguments === "string") l.args += f.arguments;
      }
      if (!Array.isArray(d.tool_calls)) continue;
      for (const tc of d.tool_calls) {
        if (!isObject(tc)) continue;
        const at = typeof tc.index === "number" ? tc.index : 0;
        const call = this.#calls[at] ??= { id: "", name: "", args: "" };
        if (typeof tc.id === "string") call.id = tc.id;
        const fn = isObject(tc.function) ? tc.function : {};
        if (typeof fn.name === "string") call.name += fn.name;
        if (typeof fn.arguments === "string") call.args += fn.arguments;
      }
    }
  }

  result(): NormResponse {
    return {
      id: this.#id,
      model: this.#model,
      text: this.#text,
      tool_calls: [
        ...legacyCall(
          this.#legacy?.name
            ? { name: this.#legacy.name, arguments: this.#legacy.args }
            : null,
        ),
        ...this.#calls.filter((c) => c && c.name).map((c, i) => ({
          id: c.id || `call_${i}`,
          name: c.name,
          ...readArguments(c.args),
        })),
      ],
      stop_reason: this.#stop,
      usage: this.#usage,
    };
  }
}

/** The Chat Completions wire. */
export const openaiChatWire: WireReader = {
  request(body, hashes) {
    if (!isObject(body) || !Array.isArray(body.messages)) {
      throw new WireShapeError("A chat completion request has `messages`");
    }
    const params: Record<string, unknown> = {};
    for (const k of PARAMS) if (k in body) params[k] = body[k];
    return {
      wire: "openai_chat",
      model: typeof body.model === "string" ? body.model : null,
      stream: body.stream === true,
      messages: body.messages.map((m, i) => messageOf(m, i, hashes?.[i])),
      tools: toolsOf(body),
      params,
      session_id: null,
      previous_response_id: null,
    };
  },
  response(body) {
    if (!isObject(body) || !Array.isArray(body.choices)) {
      throw new WireShapeError("A chat completion has `choices`");
    }
    const c = isObject(body.choices[0]) ? body.choices[0] : {};
    const m = isObject(c.message) ? c.message : {};
    return {
      id: typeof body.id === "string" ? body.id : null,
      model: typeof body.model === "string" ? body.model : null,
      text: contentText(m.content),
      tool_calls: callsOf(m.tool_calls, m.function_call),
      stop_reason: typeof c.finish_reason === "string" ? c.finish_reason : null,
      usage: chatUsage(body.usage),
    };
  },
  streamReader: () => new ChatStream(),
};
