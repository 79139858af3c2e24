/**
 * The OpenAI-compatible binding: {@linkcode ChatModel} over the Chat
 * Completions API through the official `openai` SDK (loaded on the first
 * request, named at run time so no module graph holds it). It speaks to
 * OpenAI itself and to the servers that copy its API (vLLM, Ollama,
 * llama.cpp, LM Studio). The body it sends and the answer it reads go
 * through the wire's folder (`lib/model_gateway/wires/openai_chat/chat.ts`),
 * as the gateway's do.
 *
 * @module
 */
import type { ChatModel, ChatRequest, ChatResponse } from "./chat_types.ts";
import { ModelResponseError, redactSecret } from "./binding_errors.ts";
import {
  bindingSettings,
  countingFetch,
  makeClient,
  mapSdkError,
  type SdkErrorClasses,
  SILENT_LOGGER,
} from "./_sdk.ts";
import { checkStructuredJson, excerptOf } from "./_wire.ts";
import { WireShapeError } from "../model_gateway/wire_types.ts";
import {
  openaiChatBody,
  readOpenAiChatAnswer,
} from "../model_gateway/wires/openai_chat/chat.ts";

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
    return openaiChatBody(request, {
      model: this.#model,
      maxTokensField: this.#maxTokensField,
    });
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
    try {
      return readOpenAiChatAnswer(raw, this.#model);
    } catch (err) {
      if (!(err instanceof WireShapeError)) throw err;
      throw new ModelResponseError(
        `The answer of ${this.id} from ${this.#baseUrl} is not a Chat Completions response (${err.message}); check that the URL is an OpenAI-compatible API`,
        { excerpt: redactSecret(excerptOf(raw), this.#apiKey) },
      );
    }
  }
}
