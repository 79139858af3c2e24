/**
 * The scripted model behind the Anthropic Messages wire, on loopback:
 * `POST <url>/s/<script id>/v1/messages` (the SDK's base URL is
 * `<url>/s/<script id>`). A small front for the same walker the OpenAI
 * scripted server uses (`ScriptWalker`): the request's system prompt,
 * messages (text, `tool_use`, `tool_result` blocks) and tools are
 * translated to the Chat Completions shape, the walker answers, and its
 * answer goes back as a Messages answer — streamed as SSE (`message_start`
 * … `message_stop`, arguments in `input_json_delta` pieces) when the
 * request asks for a stream, else whole. Tokens are counted by the same
 * counter as the OpenAI server, over the translated request (tools as Chat
 * Completions tools), so the two wires' figures compare.
 *
 * @module
 */
import { type Script, ScriptWalker } from "../eval/scripted_model.ts";
import {
  END_TEXT,
  newScriptStats,
  type ScriptStats,
} from "../eval/scripted_model_server.ts";
import { chatMessagesOf } from "../eval/chat_wire.ts";
import { TokenCounter, type WireMessage } from "../eval/token_count.ts";

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** A running scripted Anthropic upstream. */
export interface ScriptedAnthropicServer {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /**
   * Add (or replace) a script; its walker starts at the beginning, its
   * counts carry on.
   *
   * @param script The script.
   * @returns Its Anthropic base URL, `<url>/s/<id>`.
   */
  addScript(script: Script): string;
  /**
   * Counts of a script since it was first added.
   *
   * @param id Script id.
   * @returns Requests, tokens, walker counts.
   * @throws {RangeError} When no script has that id.
   */
  stats(id: string): ScriptStats;
  /** Stop listening. */
  close(): Promise<void>;
  /** Same as `close()`. */
  [Symbol.asyncDispose](): Promise<void>;
}

/** The text of a `content` (a string, or text blocks). */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((b) =>
    isObj(b) && b.type === "text" && typeof b.text === "string" ? b.text : ""
  ).join("");
}

/**
 * A Messages request in the Chat Completions shape: the system prompt
 * first; a user message's `tool_result` blocks become tool messages
 * (before its text); an assistant message's `tool_use` blocks its tool
 * calls (arguments as JSON text).
 *
 * @param body The request body.
 * @returns Messages and tools in the chat shape.
 */
export function chatShapeOf(
  body: Obj,
): { messages: WireMessage[]; tools: unknown[] } {
  const messages: WireMessage[] = [];
  const system = textOf(body.system);
  if (system !== "") messages.push({ role: "system", content: system });
  for (const m of Array.isArray(body.messages) ? body.messages : []) {
    if (!isObj(m)) continue;
    const blocks = Array.isArray(m.content) ? m.content.filter(isObj) : null;
    if (m.role === "assistant") {
      const calls = (blocks ?? []).filter((b) => b.type === "tool_use").map((
        b,
      ) => ({
        id: String(b.id),
        function: { name: String(b.name), arguments: JSON.stringify(b.input) },
      }));
      const text = textOf(m.content);
      messages.push({
        role: "assistant",
        content: text === "" ? null : text,
        ...(calls.length ? { tool_calls: calls } : {}),
      });
      continue;
    }
    for (const b of blocks ?? []) {
      if (b.type !== "tool_result") continue;
      messages.push({
        role: "tool",
        tool_call_id: String(b.tool_use_id),
        content: textOf(b.content),
      });
    }
    const text = textOf(m.content);
    if (text !== "" || blocks === null) {
      messages.push({ role: "user", content: text });
    }
  }
  const tools = (Array.isArray(body.tools) ? body.tools : []).filter(isObj)
    .map((t) => ({
      type: "function",
      function: {
        name: t.name,
        description: t.description,
        parameters: t.input_schema,
      },
    }));
  return { messages, tools };
}

interface Entry {
  script: Script;
  walker: ScriptWalker;
  stats: ScriptStats;
}

const ROUTE = /^\/s\/([^/]+)\/v1\/messages\/?$/;

/** An answer's content blocks. */
function blocksOf(
  content: string | null,
  calls: { id: string; name: string; arguments: unknown }[],
): Obj[] {
  const out: Obj[] = [];
  if (content !== null) out.push({ type: "text", text: content });
  for (const c of calls) {
    out.push({ type: "tool_use", id: c.id, name: c.name, input: c.arguments });
  }
  return out;
}

/** A message as SSE events, arguments in pieces of 40 characters. */
function sseOf(message: Obj, outputTokens: number): string {
  const out: string[] = [];
  const emit = (type: string, fields: Obj) =>
    out.push(
      `event: ${type}\ndata: ${JSON.stringify({ type, ...fields })}\n\n`,
    );
  const usage = message.usage as Obj;
  emit("message_start", {
    message: {
      ...message,
      content: [],
      stop_reason: null,
      usage: { ...usage, output_tokens: 1 },
    },
  });
  (message.content as Obj[]).forEach((block, index) => {
    if (block.type === "text") {
      emit("content_block_start", {
        index,
        content_block: { type: "text", text: "" },
      });
      emit("content_block_delta", {
        index,
        delta: { type: "text_delta", text: block.text },
      });
    } else {
      emit("content_block_start", {
        index,
        content_block: { ...block, input: {} },
      });
      const json = JSON.stringify(block.input);
      for (let at = 0; at < json.length; at += 40) {
        emit("content_block_delta", {
          index,
          delta: {
            type: "input_json_delta",
            partial_json: json.slice(at, at + 40),
          },
        });
      }
    }
    emit("content_block_stop", { index });
  });
  emit("message_delta", {
    delta: { stop_reason: message.stop_reason, stop_sequence: null },
    usage: { output_tokens: outputTokens },
  });
  emit("message_stop", {});
  return out.join("");
}

const error = (status: number, message: string) =>
  Response.json({
    type: "error",
    error: {
      type: status === 404 ? "not_found_error" : "invalid_request_error",
      message,
    },
  }, { status });

// Over 80 lines: one closure factory; the handler and the returned methods share the scripts and the token counter.
/**
 * Start the scripted Anthropic upstream on 127.0.0.1.
 *
 * @param options The state-changing tools (the walkers' `writes`).
 * @returns The running server.
 */
export function startScriptedAnthropic(
  options: { writes: ReadonlySet<string> },
): ScriptedAnthropicServer {
  const scripts = new Map<string, Entry>();
  const counter = new TokenCounter();
  let served = 0;
  const entry = (id: string): Entry => {
    const e = scripts.get(id);
    if (!e) throw new RangeError(`No script "${id}" on the Anthropic front`);
    return e;
  };

  async function handle(req: Request): Promise<Response> {
    const path = new URL(req.url).pathname;
    const match = ROUTE.exec(path);
    if (!match || req.method !== "POST") {
      return error(404, `No route ${req.method} ${path}`);
    }
    const e = scripts.get(decodeURIComponent(match[1]));
    if (!e) return error(404, `No script for ${path}`);
    let body: unknown;
    try {
      body = await req.json();
    } catch (err) {
      return error(400, `The body is not JSON: ${(err as Error).message}`);
    }
    if (!isObj(body) || !Array.isArray(body.messages)) {
      return error(400, "messages must be an array");
    }
    const chat = chatShapeOf(body);
    const before = e.walker.stats;
    const step = e.walker.next(chatMessagesOf(chat.messages));
    const after = e.walker.stats;
    e.stats.skipped_calls += after.skipped_calls - before.skipped_calls;
    e.stats.skipped_turns += after.skipped_turns - before.skipped_turns;
    e.stats.repeated_writes += after.repeated_writes - before.repeated_writes;
    const answer = "exhausted" in step
      ? { content: END_TEXT, tool_calls: [] }
      : step;
    const prompt = counter.prompt(chat);
    const completion = counter.completion({
      content: answer.content,
      tool_calls: answer.tool_calls.map((c) => ({
        name: c.name,
        arguments: c.raw_arguments,
      })),
    });
    e.stats.requests++;
    e.stats.prompt_tokens += prompt;
    e.stats.completion_tokens += completion;
    served++;
    const message = {
      id: `msg_scripted_${served}`,
      type: "message",
      role: "assistant",
      model: typeof body.model === "string" ? body.model : "scripted-replay",
      content: blocksOf(answer.content, answer.tool_calls),
      stop_reason: answer.tool_calls.length ? "tool_use" : "end_turn",
      stop_sequence: null,
      usage: { input_tokens: prompt, output_tokens: completion },
    };
    if (body.stream !== true) return Response.json(message);
    return new Response(sseOf(message, completion), {
      headers: { "content-type": "text/event-stream; charset=utf-8" },
    });
  }

  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    handle,
  );
  const url = `http://127.0.0.1:${server.addr.port}`;
  let closed: Promise<void> | null = null;
  const close = () => closed ??= server.shutdown();
  return {
    url,
    addScript(script: Script): string {
      const stats = scripts.get(script.id)?.stats ?? newScriptStats();
      scripts.set(script.id, {
        script,
        walker: new ScriptWalker(script, { writes: options.writes }),
        stats,
      });
      return `${url}/s/${encodeURIComponent(script.id)}`;
    },
    stats: (id) => ({ ...entry(id).stats }),
    close,
    [Symbol.asyncDispose]: close,
  };
}
