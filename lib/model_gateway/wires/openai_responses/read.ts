/**
 * OpenAI Responses (`POST /v1/responses`) as the gateway reads it: input
 * items, whole answers and streamed events.
 *
 * @module
 */
import type { ExposedTool } from "../../../trace/tool_events.ts";
import { messageHash } from "../../message_hash.ts";
import { contentText } from "../openai_chat/read.ts";
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

const PARAMS = [
  "temperature",
  "top_p",
  "max_output_tokens",
  "tool_choice",
  "parallel_tool_calls",
  "reasoning",
  "text",
  "truncation",
  "store",
];

/** An item the conversation keeps but nothing reads (reasoning, references). */
function opaque(hash: string): NormMessage {
  return {
    role: "system",
    text: "",
    tool_calls: [],
    tool_results: [],
    hash,
    opaque: true,
  };
}

function itemOf(item: unknown, i: number, known?: string): NormMessage {
  if (typeof item === "string") {
    return {
      role: "user",
      text: item,
      tool_calls: [],
      tool_results: [],
      hash: known ?? messageHash(item),
    };
  }
  if (!isObject(item)) throw new WireShapeError(`input[${i}] is not an item`);
  const hash = known ?? messageHash(item);
  if (item.type === "function_call") {
    if (typeof item.name !== "string") return opaque(hash);
    return {
      role: "assistant",
      text: "",
      tool_calls: [{
        id: typeof item.call_id === "string" ? item.call_id : `call_${i}`,
        name: item.name,
        ...readArguments(item.arguments),
      }],
      tool_results: [],
      hash,
    };
  }
  if (item.type === "function_call_output") {
    const out = item.output;
    return {
      role: "tool",
      text: "",
      tool_calls: [],
      tool_results: [{
        id: typeof item.call_id === "string" ? item.call_id : `result_${i}`,
        text: typeof out === "string" ? out : contentText(out),
        is_error: false,
      }],
      hash,
    };
  }
  if (typeof item.role !== "string") return opaque(hash); // reasoning …
  const role = item.role === "assistant"
    ? "assistant"
    : item.role === "system" || item.role === "developer"
    ? "system"
    : "user";
  return {
    role,
    text: contentText(item.content),
    tool_calls: [],
    tool_results: [],
    hash,
  };
}

function toolsOf(body: Record<string, unknown>): ExposedTool[] {
  const out: ExposedTool[] = [];
  for (const t of Array.isArray(body.tools) ? body.tools : []) {
    if (!isObject(t) || typeof t.name !== "string") continue;
    out.push(
      exposedTool(t.name, { description: t.description, schema: t.parameters }),
    );
  }
  return out;
}

/** Usage of an answer, as the neutral usage. */
export function usageOf(u: unknown): NormUsage | null {
  if (!isObject(u)) return null;
  const input = numberOrNull(u.input_tokens);
  const output = numberOrNull(u.output_tokens);
  const details = isObject(u.input_tokens_details)
    ? u.input_tokens_details
    : {};
  return {
    input_tokens: input,
    output_tokens: output,
    cache_read_input_tokens: numberOrNull(details.cached_tokens),
    total_tokens: numberOrNull(u.total_tokens) ??
      (input ?? 0) + (output ?? 0),
  };
}

function outputOf(items: unknown[]): { text: string; calls: NormToolCall[] } {
  let text = "";
  const calls: NormToolCall[] = [];
  items.forEach((it, i) => {
    if (!isObject(it)) return;
    if (it.type === "message") {
      const t = contentText(it.content);
      if (t) text += (text ? "\n" : "") + t;
    } else if (it.type === "function_call" && typeof it.name === "string") {
      calls.push({
        id: typeof it.call_id === "string" ? it.call_id : `call_${i}`,
        name: it.name,
        ...readArguments(it.arguments),
      });
    }
  });
  return { text, calls };
}

function responseOf(body: Record<string, unknown>): NormResponse {
  const { text, calls } = outputOf(
    Array.isArray(body.output) ? body.output : [],
  );
  const incomplete = isObject(body.incomplete_details)
    ? body.incomplete_details.reason
    : null;
  return {
    id: typeof body.id === "string" ? body.id : null,
    model: typeof body.model === "string" ? body.model : null,
    text,
    tool_calls: calls,
    stop_reason: typeof incomplete === "string"
      ? incomplete
      : calls.length > 0
      ? "tool_calls"
      : typeof body.status === "string"
      ? body.status
      : null,
    usage: usageOf(body.usage),
  };
}

/** Streamed Responses events, gathered. */
class ResponsesStream implements StreamAccumulator {
  #final: NormResponse | null = null;
  #id: string | null = null;
  #model: string | null = null;
  #items: unknown[] = [];
  #text = "";
  complete = false;

  add(event: string | null, data: string): void {
    let ev: unknown;
    try {
      ev = JSON.parse(data);
    } catch {
      return;
    }
    if (!isObject(ev)) return;
    const type = typeof ev.type === "string" ? ev.type : event;
    if (isObject(ev.response)) {
      const r = ev.response;
      if (typeof r.id === "string") this.#id = r.id;
      if (typeof r.model === "string") this.#model = r.model;
      if (
        type === "response.completed" || type === "response.incomplete" ||
        type === "response.failed"
      ) {
        this.#final = responseOf(r);
        this.complete = true;
      }
    }
    if (type === "response.output_item.done" && ev.item !== undefined) {
      this.#items.push(ev.item);
    }
    if (
      type === "response.output_text.delta" && typeof ev.delta === "string"
    ) this.#text += ev.delta;
  }

  result(): NormResponse {
    if (this.#final) return this.#final;
    const { text, calls } = outputOf(this.#items);
    return {
      id: this.#id,
      model: this.#model,
      text: text || this.#text,
      tool_calls: calls,
      stop_reason: null,
      usage: null,
    };
  }
}

/** The Responses wire. */
export const openaiResponsesWire: WireReader = {
  request(body, hashes) {
    if (!isObject(body) || body.input === undefined) {
      throw new WireShapeError("A Responses request has `input`");
    }
    const input = typeof body.input === "string" ? [body.input] : body.input;
    if (!Array.isArray(input)) {
      throw new WireShapeError("`input` is text or a list of items");
    }
    const params: Record<string, unknown> = {};
    for (const k of PARAMS) if (k in body) params[k] = body[k];
    // One message per item, so positions match the input list.
    const messages = input.map((item, i) => itemOf(item, i, hashes?.[i]));
    return {
      wire: "openai_responses",
      model: typeof body.model === "string" ? body.model : null,
      stream: body.stream === true,
      messages,
      tools: toolsOf(body),
      params,
      session_id: null,
      previous_response_id: typeof body.previous_response_id === "string"
        ? body.previous_response_id
        : null,
      conversation: typeof body.conversation === "string"
        ? body.conversation
        : isObject(body.conversation) &&
            typeof body.conversation.id === "string"
        ? body.conversation.id
        : null,
    };
  },
  response(body) {
    if (!isObject(body) || !Array.isArray(body.output)) {
      throw new WireShapeError("A response has `output`");
    }
    return responseOf(body);
  },
  streamReader: () => new ResponsesStream(),
};
