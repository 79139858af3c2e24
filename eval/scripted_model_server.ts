/**
 * A scripted model behind the real OpenAI Chat Completions wire format, on
 * loopback: `POST <url>/s/<script id>/v1/chat/completions`. Each script has
 * its own {@linkcode ScriptWalker}, so many episodes share one server, even
 * at once; every answered request is counted with a real tokenizer
 * ({@linkcode TokenCounter}, o200k_base) and the counts are both sent as
 * `usage` and kept per script.
 *
 * @module
 */
import { type Script, ScriptWalker } from "./scripted_model.ts";
import {
  chatMessagesOf,
  ChatRequestError,
  parseChatRequest,
  type WireRequest,
} from "./chat_wire.ts";

import { TokenCounter } from "./token_count.ts";
import type { ChatToolCall } from "../lib/models/chat_types.ts";

/** The text answered when the script has no turn left. */
export const END_TEXT = "###END###";

/** Largest request body read (bytes). */
export const MAX_REQUEST_BYTES = 32 * 1024 * 1024;

/** Options of {@linkcode startScriptedModelServer}. */
export interface ScriptedModelServerOptions {
  /** Tools that change state (the walkers' `writes`). */
  writes: ReadonlySet<string>;
  /** Loopback only. @default "127.0.0.1" */
  hostname?: "127.0.0.1";
  /** Port (0 picks a free one). @default 0 */
  port?: number;
  /** Clock for `created` (ms since the epoch). @default Date.now */
  now?: () => number;
}

/** Requests, tokens and walker counts of one script, since it was first added (a reset keeps them). */
export interface ScriptStats {
  /** Requests answered (200). */
  requests: number;
  /** Sum of their prompt tokens. */
  prompt_tokens: number;
  /** Sum of their completion tokens. */
  completion_tokens: number;
  /** Recorded reads left out because the request already held their result. */
  skipped_calls: number;
  /** Recorded turns skipped because nothing of them was left. */
  skipped_turns: number;
  /** Refused writes sent again. */
  repeated_writes: number;
}

/**
 * A script's counts before its first request (every count 0).
 *
 * @returns Fresh stats.
 */
export function newScriptStats(): ScriptStats {
  return {
    requests: 0,
    prompt_tokens: 0,
    completion_tokens: 0,
    skipped_calls: 0,
    skipped_turns: 0,
    repeated_writes: 0,
  };
}

/** A running scripted model server. */
export interface ScriptedModelServer {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /**
   * Add (or replace) a script; its walker starts at the beginning, its
   * counts carry on.
   *
   * @param script The script.
   * @returns Its OpenAI base URL, `<url>/s/<id>/v1`.
   */
  addScript(script: Script): string;
  /**
   * Restart a script's walker (its counts carry on).
   *
   * @param id Script id.
   * @throws {RangeError} When no script has that id.
   */
  resetScript(id: string): void;
  /**
   * Counts of a script since it was first added.
   *
   * @param id Script id.
   * @returns Requests, prompt and completion tokens.
   * @throws {RangeError} When no script has that id.
   */
  stats(id: string): ScriptStats;
  /** Stop listening and wait for open requests. */
  close(): Promise<void>;
  /** Same as `close()`. */
  [Symbol.asyncDispose](): Promise<void>;
}

function errorBody(status: number, message: string, param: string | null) {
  const type = status === 404 ? "not_found_error" : "invalid_request_error";
  return Response.json(
    { error: { message, type, param, code: null } },
    { status },
  );
}

interface Entry {
  script: Script;
  walker: ScriptWalker;
  stats: ScriptStats;
}

const ROUTE = /^\/s\/([^/]+)\/v1\/chat\/completions\/?$/;

// One closure factory; the handler and the returned methods share the scripts, the token counter and the served count.
/**
 * Start a scripted model server on loopback.
 *
 * @example
 * ```ts ignore
 * await using server = startScriptedModelServer({ writes: new Set(["cancel_pending_order"]) });
 * const baseURL = server.addScript(scriptFromTau2(simulation));
 * const client = new OpenAI({ baseURL, apiKey: "x" });
 * ```
 *
 * @param options State-changing tools, port, clock.
 * @returns The running server.
 * @throws {TypeError} When `writes` is not a Set or `hostname` is not loopback.
 */
export function startScriptedModelServer(
  options: ScriptedModelServerOptions,
): ScriptedModelServer {
  if (!(options?.writes instanceof Set)) {
    throw new TypeError(
      "startScriptedModelServer needs options.writes, the Set of state-changing tools",
    );
  }
  const hostname = options.hostname ?? "127.0.0.1";
  if (hostname !== "127.0.0.1") {
    throw new TypeError(
      `The scripted model server listens on 127.0.0.1 only, got "${hostname}"`,
    );
  }
  const writes = options.writes;
  const now = options.now ?? Date.now;
  const scripts = new Map<string, Entry>();
  const counter = new TokenCounter();
  let served = 0;

  const entry = (id: string): Entry => {
    const e = scripts.get(id);
    if (!e) {
      throw new RangeError(
        `No script "${id}" on the scripted model server; add it with addScript()`,
      );
    }
    return e;
  };

  async function handle(req: Request): Promise<Response> {
    const path = new URL(req.url).pathname;
    const match = ROUTE.exec(path);
    if (!match) {
      return errorBody(
        404,
        `No route ${path}; use POST /s/<script id>/v1/chat/completions`,
        null,
      );
    }
    if (req.method !== "POST") {
      return errorBody(405, `Use POST for ${path}`, null);
    }
    let id: string;
    try {
      id = decodeURIComponent(match[1]);
    } catch {
      return errorBody(400, `Unreadable script id in ${path}`, null);
    }
    const e = scripts.get(id);
    if (!e) {
      return errorBody(
        404,
        `No script "${id}" on this server; add it with addScript()`,
        null,
      );
    }
    const length = Number(req.headers.get("content-length") ?? "0");
    if (length > MAX_REQUEST_BYTES) {
      return errorBody(
        413,
        `The request body is ${length} bytes, over ${MAX_REQUEST_BYTES}`,
        null,
      );
    }
    const wire = await readWire(req);
    if (wire instanceof Response) return wire;
    const walker = e.walker;
    const before = walker.stats;
    const step = walker.next(chatMessagesOf(wire.messages));
    const after = walker.stats;
    e.stats.skipped_calls += after.skipped_calls - before.skipped_calls;
    e.stats.skipped_turns += after.skipped_turns - before.skipped_turns;
    e.stats.repeated_writes += after.repeated_writes - before.repeated_writes;
    const answer = "exhausted" in step
      ? { content: END_TEXT, tool_calls: [] as ChatToolCall[] }
      : step;
    const toolCalls = answer.tool_calls.map((c) => ({
      id: c.id,
      type: "function" as const,
      function: { name: c.name, arguments: c.raw_arguments },
    }));
    const prompt = counter.prompt(wire);
    const completion = counter.completion({
      content: answer.content,
      tool_calls: toolCalls.map((t) => t.function),
    });
    e.stats.requests++;
    e.stats.prompt_tokens += prompt;
    e.stats.completion_tokens += completion;
    served++;
    return Response.json(
      completionBody(served, now(), wire.model, answer.content, toolCalls, {
        prompt,
        completion,
      }),
    );
  }

  const server = Deno.serve(
    { hostname, port: options.port ?? 0, onListen: () => {} },
    handle,
  );
  const url = `http://${hostname}:${server.addr.port}`;
  let closed: Promise<void> | null = null;
  const close = () => closed ??= server.shutdown();

  return {
    url,
    addScript(script: Script): string {
      if (typeof script?.id !== "string" || !Array.isArray(script.turns)) {
        throw new TypeError("addScript needs a Script (scriptFromTau2)");
      }
      const stats = scripts.get(script.id)?.stats ?? newScriptStats();
      scripts.set(script.id, {
        script,
        walker: new ScriptWalker(script, { writes }),
        stats,
      });
      return `${url}/s/${encodeURIComponent(script.id)}/v1`;
    },
    resetScript(id: string): void {
      const e = entry(id);
      e.walker = new ScriptWalker(e.script, { writes });
    },
    stats(id: string): ScriptStats {
      return { ...entry(id).stats };
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

/**
 * Read and parse a chat request's body.
 *
 * @param req The request.
 * @returns The request, or the error answer.
 */
async function readWire(req: Request): Promise<WireRequest | Response> {
  try {
    const text = await req.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (err) {
      throw new ChatRequestError(
        `The request body is not JSON: ${(err as Error).message}`,
      );
    }
    return parseChatRequest(body);
  } catch (err) {
    if (err instanceof ChatRequestError) {
      return errorBody(err.status, err.message, err.param);
    }
    return errorBody(
      400,
      `Unreadable request: ${(err as Error).message}`,
      null,
    );
  }
}

/**
 * A Chat Completions answer body.
 *
 * @param served How many answers the server has given, this one included.
 * @param nowMs The clock, milliseconds.
 * @param model The model the request named.
 * @param content The answer's text.
 * @param toolCalls Its tool calls, in wire form.
 * @param usage Prompt and completion tokens.
 * @returns The body.
 */
function completionBody(
  served: number,
  nowMs: number,
  model: string,
  content: string | null,
  toolCalls: {
    id: string;
    type: "function";
    function: { name: string; arguments: string };
  }[],
  usage: { prompt: number; completion: number },
): Record<string, unknown> {
  return {
    id: `chatcmpl-scripted-${served}`,
    object: "chat.completion",
    created: Math.floor(nowMs / 1000),
    model,
    choices: [{
      index: 0,
      message: {
        role: "assistant",
        content,
        ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
        refusal: null,
      },
      logprobs: null,
      finish_reason: toolCalls.length ? "tool_calls" : "stop",
    }],
    usage: {
      prompt_tokens: usage.prompt,
      completion_tokens: usage.completion,
      total_tokens: usage.prompt + usage.completion,
    },
  };
}
