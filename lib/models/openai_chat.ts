/**
 * The OpenAI-compatible binding: {@linkcode ChatModel} over the Chat
 * Completions API through the official `openai` SDK (loaded on the first
 * request, named at run time so no module graph holds it). It speaks to
 * OpenAI itself and to the servers that copy its API (vLLM, Ollama,
 * llama.cpp, LM Studio).
 *
 * @module
 */
import type {
  ChatMessage,
  ChatModel,
  ChatRequest,
  ChatResponse,
  ChatToolCall,
} from "./chat_types.ts";
import { ModelResponseError, redactSecret } from "./binding_errors.ts";
import {
  bindingSettings,
  countingFetch,
  makeClient,
  mapSdkError,
  type SdkErrorClasses,
  SILENT_LOGGER,
} from "./_sdk.ts";
import {
  checkStructuredJson,
  excerptOf,
  isObject,
  parseToolArguments,
} from "./_wire.ts";

/** The SDK's import specifier (mapped in deno.json to `npm:openai@7.57.0`). */
export const OPENAI_SDK = "openai";

/** OpenAI's own base URL. */
export const OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1";

/** Options of {@linkcode OpenAiChatModel}. */
export interface OpenAiChatOptions {
  /**
   * Base URL of the API, with its version path (`http://127.0.0.1:8000/v1`).
   * @default {"https://api.openai.com/v1"}
   */
  baseUrl?: string;
  /** API key (sent as a bearer token; never shown in a message). */
  apiKey?: string;
  /**
   * Time-out of each attempt, in milliseconds.
   * @default {60000}
   */
  timeoutMs?: number;
  /**
   * Retries of 408/409/429/5xx answers and failed connections, by the SDK:
   * exponential back-off from 0.5 s (at most 8 s, with jitter), or the
   * wait the server asks for in `retry-after-ms` / `retry-after` (up to 60 s).
   * @default {3}
   */
  maxRetries?: number;
  /**
   * Which field carries `max_tokens`. OpenAI's reasoning models accept only
   * `max_completion_tokens`; vLLM, Ollama, llama.cpp and LM Studio all read
   * `max_tokens`.
   * @default {"max_completion_tokens" on api.openai.com, "max_tokens" elsewhere}
   */
  maxTokensField?: "max_tokens" | "max_completion_tokens";
}

interface OpenAiClient {
  chat: {
    completions: {
      create(
        body: Record<string, unknown>,
        options: Record<string, unknown>,
      ): Promise<unknown>;
    };
  };
}

type OpenAiModule = SdkErrorClasses & {
  default: new (options: Record<string, unknown>) => OpenAiClient;
};

/**
 * A chat model behind an OpenAI-compatible Chat Completions endpoint.
 *
 * @example Asking a local server
 * ```ts ignore
 * const model = new OpenAiChatModel("qwen3-8b", {
 *   baseUrl: "http://127.0.0.1:8000/v1",
 *   apiKey: "sk-no-key-required",
 * });
 * const answer = await model.complete({
 *   messages: [{ role: "user", content: "Say hello" }],
 * });
 * ```
 */
export class OpenAiChatModel implements ChatModel {
  /** `openai/<model>`. */
  readonly id: string;
  readonly #model: string;
  readonly #baseUrl: string;
  readonly #apiKey: string;
  readonly #timeoutMs: number;
  readonly #maxRetries: number;
  readonly #maxTokensField: "max_tokens" | "max_completion_tokens";
  #sdk: OpenAiModule | null = null;

  /**
   * Bind a model.
   *
   * @param model The API's model name (may contain `/`).
   * @param options Endpoint, key, time-out and retries.
   * @throws {ModelConfigError} Without a model name or a key, or with a base
   *   URL that is not http(s).
   */
  constructor(model: string, options: OpenAiChatOptions = {}) {
    const b = bindingSettings(model, {
      ...options,
      provider: {
        name: "openai",
        label: "OpenAI",
        baseUrl: OPENAI_DEFAULT_BASE_URL,
        example: "http://127.0.0.1:8000/v1",
      },
    });
    this.id = b.id;
    this.#model = model;
    this.#baseUrl = b.baseUrl;
    this.#apiKey = b.apiKey;
    this.#timeoutMs = b.timeoutMs;
    this.#maxRetries = b.maxRetries;
    this.#maxTokensField = options.maxTokensField ??
      (new URL(b.baseUrl).hostname === "api.openai.com"
        ? "max_completion_tokens"
        : "max_tokens");
  }

  /** The endpoint's base URL. */
  get baseUrl(): string {
    return this.#baseUrl;
  }

  /**
   * What `JSON.stringify` shows: the id and base URL, never the key.
   *
   * @returns A plain record.
   */
  toJSON(): { id: string; base_url: string } {
    return { id: this.id, base_url: this.#baseUrl };
  }

  /**
   * A one-line description (no key).
   *
   * @returns `OpenAiChatModel(openai/… at URL)`.
   */
  toString(): string {
    return `OpenAiChatModel(${this.id} at ${this.#baseUrl})`;
  }

  /**
   * Build the Chat Completions body of a request (what goes on the wire,
   * without the key).
   *
   * @param request The provider-neutral request.
   * @returns The JSON body.
   */
  wireRequest(request: ChatRequest): Record<string, unknown> {
    const body: Record<string, unknown> = {
      model: this.#model,
      messages: request.messages.map(wireMessage),
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
      body[this.#maxTokensField] = request.max_tokens;
    }
    if (request.temperature !== undefined) {
      body.temperature = request.temperature;
    }
    return body;
  }

  /**
   * Ask once (the SDK retries 408/409/429/5xx and failed connections).
   *
   * @param request The request.
   * @returns The answer.
   * @throws {ModelApiError} The API failed, timed out or could not be reached.
   * @throws {ModelResponseError} The answer is not JSON, not the Chat
   *   Completions shape, or not the structured output asked for.
   */
  async complete(request: ChatRequest): Promise<ChatResponse> {
    const sdk = this.#sdk ??= await import(OPENAI_SDK) as OpenAiModule;
    const counter = countingFetch();
    const client = makeClient(sdk, {
      apiKey: this.#apiKey,
      baseURL: this.#baseUrl,
      organization: null,
      project: null,
      adminAPIKey: null,
      webhookSecret: null,
      timeout: this.#timeoutMs,
      maxRetries: this.#maxRetries,
      logLevel: "off",
      logger: SILENT_LOGGER,
      fetch: counter.fetch,
    });
    let raw: unknown;
    try {
      raw = await client.chat.completions.create(
        this.wireRequest(request),
        request.signal ? { signal: request.signal } : {},
      );
    } catch (err) {
      throw mapSdkError(err, {
        sdk,
        model: this.id,
        url: this.#baseUrl,
        apiKey: this.#apiKey,
        attempts: counter.count,
        signal: request.signal,
      });
    }
    const resp = this.#readAnswer(raw);
    if (request.response_format && resp.content !== null && !resp.refusal) {
      checkStructuredJson(resp.content, {
        name: request.response_format.name,
        model: this.id,
      });
    }
    return resp;
  }

  #readAnswer(raw: unknown): ChatResponse {
    const bad = (what: string): never => {
      throw new ModelResponseError(
        `The answer of ${this.id} from ${this.#baseUrl} is not a Chat Completions response (${what}); check that the URL is an OpenAI-compatible API`,
        { excerpt: redactSecret(excerptOf(raw), this.#apiKey) },
      );
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
    const refusal = typeof msg.refusal === "string" && msg.refusal
      ? msg.refusal
      : null;
    const usage = isObject(raw.usage) &&
        typeof raw.usage.prompt_tokens === "number"
      ? {
        prompt_tokens: raw.usage.prompt_tokens,
        completion_tokens: typeof raw.usage.completion_tokens === "number"
          ? raw.usage.completion_tokens
          : 0,
      }
      : null;
    const finish = typeof choice.finish_reason === "string"
      ? choice.finish_reason
      : tool_calls.length > 0
      ? "tool_calls"
      : "stop";
    return {
      content: (msg.content as string | null | undefined) ?? null,
      tool_calls,
      finish_reason: refusal ? "refusal" : finish,
      refusal,
      usage,
      model: typeof raw.model === "string" ? raw.model : this.#model,
    };
  }
}

function wireMessage(m: ChatMessage): Record<string, unknown> {
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
