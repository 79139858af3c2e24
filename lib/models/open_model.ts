/**
 * Opening a chat model from a `provider/model` id (`--model`), an optional
 * base URL (`--model-url`) and the environment the caller passes in.
 *
 * @module
 */
import type { ChatModel } from "./chat_types.ts";
import { ModelConfigError } from "./binding_errors.ts";
import { isLoopbackUrl } from "./_sdk.ts";
import { OpenAiChatModel } from "./openai_chat.ts";
import { AnthropicMessagesModel } from "./anthropic_messages.ts";

/**
 * The environment variables the model bindings need, for a CLI to grant
 * exactly these (`--allow-env=…`). The first four are read by
 * {@linkcode openModel} from the `env` its caller passes. The last two are
 * read by the SDKs themselves when a binding makes its client (extra
 * headers; every other variable they would read is set by the binding):
 * without permission the OpenAI SDK makes Deno prompt on a terminal, and
 * the Anthropic SDK fails (the binding then says which to grant).
 */
export const MODEL_ENV_VARS: readonly string[] = Object.freeze([
  "OPENAI_BASE_URL",
  "OPENAI_API_KEY",
  "ANTHROPIC_BASE_URL",
  "ANTHROPIC_API_KEY",
  "OPENAI_CUSTOM_HEADERS",
  "ANTHROPIC_CUSTOM_HEADERS",
]);

/** The key sent to a local OpenAI-compatible server when none is set. */
export const LOCAL_PLACEHOLDER_KEY = "sk-no-key-required";

/** The providers {@linkcode openModel} knows. */
export const MODEL_PROVIDERS: readonly string[] = Object.freeze([
  "openai",
  "anthropic",
]);

/** Options of {@linkcode openModel}. */
export interface OpenModelOptions {
  /** Base URL (`--model-url`); wins over the provider's `*_BASE_URL`. */
  url?: string;
  /** The environment to read the base URL and key from (never `Deno.env` itself). */
  env?: Record<string, string | undefined>;
  /** API key; wins over the provider's `*_API_KEY`. */
  apiKey?: string;
  /**
   * Time-out of each attempt, in milliseconds.
   * @default {60000}
   */
  timeoutMs?: number;
  /**
   * Retries of 408/409/429/5xx answers and failed connections.
   * @default {3}
   */
  maxRetries?: number;
}

/**
 * Open a chat model by id.
 *
 * `openai/<model>` is any OpenAI-compatible Chat Completions API (base URL
 * with its `/v1`: `--model-url`, else `OPENAI_BASE_URL`, else OpenAI's);
 * `anthropic/<model>` the Anthropic Messages API (`--model-url`, else
 * `ANTHROPIC_BASE_URL`, else Anthropic's). The model name is everything after
 * the first `/` and may hold more (`openai/meta-llama/Llama-3-8B`).
 *
 * The key is `apiKey`, else `OPENAI_API_KEY` / `ANTHROPIC_API_KEY`. A
 * missing key is an error, with one exception: an `openai/` model whose base
 * URL is on loopback (127.0.0.0/8, `localhost`, `::1`) is a local server
 * (vLLM, Ollama, llama.cpp, LM Studio), which usually wants no key, so
 * {@linkcode LOCAL_PLACEHOLDER_KEY} is sent. A remote URL always needs a
 * real key: a request would only fail later with a 401.
 *
 * @param id `provider/model`.
 * @param options Base URL, environment, key, time-out and retries.
 * @returns The model (it makes no request until asked).
 * @throws {ModelConfigError} A malformed id, an unknown provider, a base URL
 *   that is not http(s), or a missing key (naming the variable to set).
 *
 * @example A local vLLM server
 * ```ts
 * import { openModel } from "./open_model.ts";
 * import { equal } from "node:assert/strict";
 *
 * const model = openModel("openai/meta-llama/Llama-3-8B", {
 *   url: "http://127.0.0.1:8000/v1",
 *   env: {},
 * });
 * equal(model.id, "openai/meta-llama/Llama-3-8B");
 * ```
 */
export function openModel(
  id: string,
  options: OpenModelOptions = {},
): ChatModel {
  const slash = id.indexOf("/");
  const provider = slash > 0 ? id.slice(0, slash) : "";
  const name = slash > 0 ? id.slice(slash + 1) : "";
  if (!provider || !name) {
    throw new ModelConfigError(
      `The model id ${
        JSON.stringify(id)
      } is not provider/model: give --model openai/MODEL or anthropic/MODEL (e.g. openai/gpt-4o, anthropic/claude-sonnet-4-5)`,
    );
  }
  const env = options.env ?? {};
  const common = {
    timeoutMs: options.timeoutMs,
    maxRetries: options.maxRetries,
  };
  if (provider === "openai") {
    const baseUrl = options.url || env.OPENAI_BASE_URL || undefined;
    let apiKey = options.apiKey || env.OPENAI_API_KEY || undefined;
    if (!apiKey && baseUrl && isLoopbackUrl(baseUrl)) {
      apiKey = LOCAL_PLACEHOLDER_KEY;
    }
    if (!apiKey) {
      throw new ModelConfigError(
        `No API key for ${id}: set OPENAI_API_KEY (a local server on 127.0.0.1 given with --model-url needs none)`,
        { variable: "OPENAI_API_KEY" },
      );
    }
    return new OpenAiChatModel(name, { ...common, baseUrl, apiKey });
  }
  if (provider === "anthropic") {
    const baseUrl = options.url || env.ANTHROPIC_BASE_URL || undefined;
    const apiKey = options.apiKey || env.ANTHROPIC_API_KEY || undefined;
    if (!apiKey) {
      throw new ModelConfigError(
        `No API key for ${id}: set ANTHROPIC_API_KEY`,
        { variable: "ANTHROPIC_API_KEY" },
      );
    }
    return new AnthropicMessagesModel(name, { ...common, baseUrl, apiKey });
  }
  throw new ModelConfigError(
    `Unknown model provider ${JSON.stringify(provider)} in ${
      JSON.stringify(id)
    }: use ${
      MODEL_PROVIDERS.map((p) => `${p}/MODEL`).join(" or ")
    } (any OpenAI-compatible server is openai/ with --model-url)`,
  );
}
