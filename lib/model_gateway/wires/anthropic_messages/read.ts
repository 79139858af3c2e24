/**
 * Anthropic Messages (`POST /v1/messages`) as the gateway reads it:
 * requests (Claude Code's session id from `metadata.user_id`), whole
 * answers and streamed events.
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
  type NormToolResult,
  type NormUsage,
  numberOrNull,
  readArguments,
  type StreamAccumulator,
  type WireReader,
  WireShapeError,
} from "../../wire_types.ts";

const PARAMS = [
  "max_tokens",
  "temperature",
  "top_p",
  "top_k",
  "tool_choice",
  "thinking",
  "stop_sequences",
];

/** Text blocks a host adds to user turns (not typed by the user). */
function hostAdded(text: string): boolean {
  return text.trimStart().startsWith("<system-reminder>");
}

function resultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((b) => isObject(b) && typeof b.text === "string" ? b.text : "")
    .filter((t) => t !== "")
    .join("\n");
}

function messageOf(m: unknown, i: number, hash?: string): NormMessage {
  if (!isObject(m) || typeof m.role !== "string") {
    throw new WireShapeError(`messages[${i}] has no role`);
  }
  const role = m.role === "assistant"
    ? "assistant"
    : m.role === "system"
    ? "system"
    : "user";
  const texts: string[] = [];
  const calls: NormToolCall[] = [];
  const results: NormToolResult[] = [];
  if (typeof m.content === "string") texts.push(m.content);
  else if (Array.isArray(m.content)) {
    for (const b of m.content) {
      if (!isObject(b)) continue;
      if (b.type === "text" && typeof b.text === "string") {
        if (role !== "user" || !hostAdded(b.text)) texts.push(b.text);
      } else if (b.type === "tool_use" && typeof b.name === "string") {
        calls.push({
          id: typeof b.id === "string" ? b.id : `toolu_${i}_${calls.length}`,
          name: b.name,
          ...readArguments(b.input),
        });
      } else if (b.type === "tool_result") {
        results.push({
          id: typeof b.tool_use_id === "string" ? b.tool_use_id : "",
          text: resultText(b.content),
          is_error: b.is_error === true,
        });
      }
    }
  }
  return {
    role,
    text: texts.join("\n"),
    tool_calls: calls,
    tool_results: results,
    hash: hash ?? messageHash(m),
  };
}

/** Claude Code's session id: `metadata.user_id` is JSON with `session_id`. */
function sessionOf(metadata: unknown): string | null {
  if (!isObject(metadata) || typeof metadata.user_id !== "string") {
    return null;
  }
  const raw = metadata.user_id;
  try {
    const v = JSON.parse(raw);
    if (isObject(v) && typeof v.session_id === "string" && v.session_id) {
      return v.session_id;
    }
  } catch {
    // Older Claude Code: `user_<hash>_account_<uuid>_session_<uuid>`.
  }
  const m = /_session_([0-9a-f-]{36})$/.exec(raw);
  return m ? m[1] : null;
}

function toolsOf(body: Record<string, unknown>): ExposedTool[] {
  const out: ExposedTool[] = [];
  for (const t of Array.isArray(body.tools) ? body.tools : []) {
    if (!isObject(t) || typeof t.name !== "string") continue;
    out.push(
      exposedTool(t.name, {
        description: t.description,
        schema: t.input_schema,
      }),
    );
  }
  return out;
}

/** Usage of a Messages answer, as the neutral usage. */
export function usageOf(u: unknown): NormUsage | null {
  if (!isObject(u)) return null;
  const input = numberOrNull(u.input_tokens);
  const output = numberOrNull(u.output_tokens);
  return {
    input_tokens: input,
    output_tokens: output,
    cache_creation_input_tokens: numberOrNull(u.cache_creation_input_tokens),
    cache_read_input_tokens: numberOrNull(u.cache_read_input_tokens),
    total_tokens: input === null && output === null
      ? null
      : (input ?? 0) + (output ?? 0),
  };
}

function contentOf(blocks: unknown[]): { text: string; calls: NormToolCall[] } {
  const texts: string[] = [];
  const calls: NormToolCall[] = [];
  blocks.forEach((b, i) => {
    if (!isObject(b)) return;
    if (b.type === "text" && typeof b.text === "string") texts.push(b.text);
    if (b.type === "tool_use" && typeof b.name === "string") {
      calls.push({
        id: typeof b.id === "string" ? b.id : `toolu_${i}`,
        name: b.name,
        ...readArguments(b.input),
      });
    }
  });
  return { text: texts.join(""), calls };
}

/** One content block of a stream, as it grows. */
interface Block {
  type: string;
  text: string;
  id?: string;
  name?: string;
  json: string;
  input?: unknown;
}

/** Streamed Messages events, gathered. */
class MessagesStream implements StreamAccumulator {
  #id: string | null = null;
  #model: string | null = null;
  #blocks: Block[] = [];
  #stop: string | null = null;
  #usage: Record<string, unknown> = {};
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
    if (type === "message_start" && isObject(ev.message)) {
      const m = ev.message;
      if (typeof m.id === "string") this.#id = m.id;
      if (typeof m.model === "string") this.#model = m.model;
      if (isObject(m.usage)) Object.assign(this.#usage, m.usage);
    } else if (type === "content_block_start" && isObject(ev.content_block)) {
      const b = ev.content_block;
      const at = typeof ev.index === "number" ? ev.index : this.#blocks.length;
      this.#blocks[at] = {
        type: typeof b.type === "string" ? b.type : "",
        text: typeof b.text === "string" ? b.text : "",
        ...(typeof b.id === "string" ? { id: b.id } : {}),
        ...(typeof b.name === "string" ? { name: b.name } : {}),
        json: "",
        input: b.input,
      };
    } else if (type === "content_block_delta" && isObject(ev.delta)) {
      const b = this.#blocks[typeof ev.index === "number" ? ev.index : -1];
      if (!b) return;
      const d = ev.delta;
      if (typeof d.text === "string") b.text += d.text;
      if (typeof d.partial_json === "string") b.json += d.partial_json;
    } else if (type === "message_delta") {
      if (isObject(ev.delta) && typeof ev.delta.stop_reason === "string") {
        this.#stop = ev.delta.stop_reason;
      }
      if (isObject(ev.usage)) {
        for (const [k, v] of Object.entries(ev.usage)) {
          if (v !== null) this.#usage[k] = v;
        }
      }
    } else if (type === "message_stop") this.complete = true;
  }

  result(): NormResponse {
    const blocks = this.#blocks.filter((b) => b).map((b) =>
      b.type === "tool_use"
        ? {
          type: "tool_use",
          id: b.id,
          name: b.name,
          input: b.json !== "" ? b.json : b.input,
        }
        : { type: b.type, text: b.text }
    );
    const { text, calls } = contentOf(blocks);
    return {
      id: this.#id,
      model: this.#model,
      text,
      tool_calls: calls,
      stop_reason: this.#stop,
      usage: Object.keys(this.#usage).length ? usageOf(this.#usage) : null,
    };
  }
}

/** The Messages wire. */
export const anthropicMessagesWire: WireReader = {
  request(body, hashes) {
    if (!isObject(body) || !Array.isArray(body.messages)) {
      throw new WireShapeError("A Messages request has `messages`");
    }
    const params: Record<string, unknown> = {};
    for (const k of PARAMS) if (k in body) params[k] = body[k];
    return {
      wire: "anthropic_messages",
      model: typeof body.model === "string" ? body.model : null,
      stream: body.stream === true,
      messages: body.messages.map((m, i) => messageOf(m, i, hashes?.[i])),
      tools: toolsOf(body),
      params,
      session_id: sessionOf(body.metadata),
      previous_response_id: null,
    };
  },
  response(body) {
    if (!isObject(body) || !Array.isArray(body.content)) {
      throw new WireShapeError("A message has `content`");
    }
    const { text, calls } = contentOf(body.content);
    return {
      id: typeof body.id === "string" ? body.id : null,
      model: typeof body.model === "string" ? body.model : null,
      text,
      tool_calls: calls,
      stop_reason: typeof body.stop_reason === "string"
        ? body.stop_reason
        : null,
      usage: usageOf(body.usage),
    };
  },
  streamReader: () => new MessagesStream(),
};
