/**
 * The Anthropic binding: {@linkcode ChatModel} over the Messages API
 * through the official `@anthropic-ai/sdk` (loaded on the first request,
 * named at run time so no module graph holds it). The body it sends and
 * the answer it reads go through the wire's folder
 * (`lib/model_gateway/wires/anthropic_messages/chat.ts`), as the gateway's
 * do.
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
  anthropicBody,
  type OutputTool,
  readAnthropicChatAnswer,
} from "../model_gateway/wires/anthropic_messages/chat.ts";

/** The SDK's import specifier (mapped in deno.json to `npm:@anthropic-ai/sdk@1.12.0`). */
export const ANTHROPIC_SDK = "@anthropic-ai/sdk";

/** Anthropic's own base URL. */
export const ANTHROPIC_DEFAULT_BASE_URL = "https://api.anthropic.com";

/** Options of {@linkcode AnthropicMessagesModel}. */
export interface AnthropicMessagesOptions {
  /**
   * Base URL of the API, without `/v1` (the SDK adds `/v1/messages`).
   * @default {"https://api.anthropic.com"}
   */
  baseUrl?: string;
  /** API key (the SDK sends it; never shown in a message). */
  apiKey?: string;
  /**
   * Time-out of each attempt, in milliseconds.
   * @default {60000}
   */
  timeoutMs?: number;
  /**
   * Retries of 408/409/429/5xx answers and failed connections, by the SDK
   * (exponential back-off from 0.5 s, or the server's `retry-after`).
   * @default {3}
   */
  maxRetries?: number;
}

interface AnthropicClient {
  post(path: string, options: Record<string, unknown>): Promise<unknown>;
}

type AnthropicModule = SdkErrorClasses & {
  default: new (options: Record<string, unknown>) => AnthropicClient;
};

/**
 * A chat model behind the Anthropic Messages API.
 *
 * Structured output: the Messages API has no JSON-schema response format
 * that every model and compatible server accepts, so a request with
 * `response_format` offers one more tool whose `input_schema` is the schema
 * (named after the format) and forces it (`tool_choice: {type: "tool"}`;
 * `{type: "any"}` when other tools are on offer, so the model may call
 * them instead). The tool's input, which the API has checked against the
 * schema, comes back as JSON text in `content`, as OpenAI's does; the
 * call itself is not listed in `tool_calls`. A schema that is not an object
 * schema travels as the `value` property of one.
 *
 * @example Asking Claude
 * ```ts ignore
 * const model = new AnthropicMessagesModel("claude-sonnet-4-5", { apiKey });
 * const answer = await model.complete({
 *   messages: [{ role: "user", content: "Say hello" }],
 * });
 * ```
 */
export class AnthropicMessagesModel implements ChatModel {
  /** `anthropic/<model>`. */
  readonly id: string;
  readonly #model: string;
  readonly #baseUrl: string;
  readonly #apiKey: string;
  readonly #timeoutMs: number;
  readonly #maxRetries: number;
  #sdk: AnthropicModule | null = null;

  /**
   * Bind a model.
   *
   * @param model The API's model name.
   * @param options Endpoint, key, time-out and retries.
   * @throws {ModelConfigError} Without a model name or a key, or with a base
   *   URL that is not http(s).
   */
  constructor(model: string, options: AnthropicMessagesOptions = {}) {
    const b = bindingSettings(model, {
      ...options,
      provider: {
        name: "anthropic",
        label: "Anthropic",
        baseUrl: ANTHROPIC_DEFAULT_BASE_URL,
        example: "https://api.anthropic.com",
      },
    });
    this.id = b.id;
    this.#model = model;
    this.#baseUrl = b.baseUrl;
    this.#apiKey = b.apiKey;
    this.#timeoutMs = b.timeoutMs;
    this.#maxRetries = b.maxRetries;
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
   * @returns `AnthropicMessagesModel(anthropic/… at URL)`.
   */
  toString(): string {
    return `AnthropicMessagesModel(${this.id} at ${this.#baseUrl})`;
  }

  /**
   * Build the Messages API body of a request (what goes on the wire,
   * without the key).
   *
   * @param request The provider-neutral request.
   * @returns The JSON body.
   */
  wireRequest(request: ChatRequest): Record<string, unknown> {
    return anthropicBody(this.#model, request).body;
  }

  /**
   * Ask once (the SDK retries 408/409/429/5xx and failed connections).
   *
   * @param request The request.
   * @returns The answer.
   * @throws {ModelApiError} The API failed, timed out or could not be reached.
   * @throws {ModelResponseError} The answer is not JSON, not the Messages
   *   shape, or (structured output asked for) text that is not JSON.
   */
  async complete(request: ChatRequest): Promise<ChatResponse> {
    const sdk = this.#sdk ??= await import(ANTHROPIC_SDK) as AnthropicModule;
    const { body, output } = anthropicBody(this.#model, request);
    const counter = countingFetch();
    const client = makeClient(sdk, {
      apiKey: this.#apiKey,
      baseURL: this.#baseUrl,
      webhookKey: null,
      timeout: this.#timeoutMs,
      maxRetries: this.#maxRetries,
      logLevel: "off",
      logger: SILENT_LOGGER,
      openTelemetry: false,
      fetch: counter.fetch,
    });
    let raw: unknown;
    try {
      // `post` rather than `messages.create`: the latter prints deprecation
      // warnings to the console, and lib/ never logs.
      raw = await client.post("/v1/messages", {
        body,
        ...(request.signal ? { signal: request.signal } : {}),
      });
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
    return this.#readAnswer(raw, output);
  }

  #readAnswer(raw: unknown, output: OutputTool | null): ChatResponse {
    let read;
    try {
      read = readAnthropicChatAnswer(raw, { model: this.#model, output });
    } catch (err) {
      if (!(err instanceof WireShapeError)) throw err;
      throw new ModelResponseError(
        `The answer of ${this.id} from ${this.#baseUrl} is not a Messages API response (${err.message}); check that the URL is an Anthropic-compatible API`,
        { excerpt: redactSecret(excerptOf(raw), this.#apiKey) },
      );
    }
    const { answer } = read;
    if (output && read.unchecked_output && answer.content !== null) {
      checkStructuredJson(answer.content, {
        name: output.name,
        model: this.id,
      });
    }
    return answer;
  }
}
