/**
 * The official `@anthropic-ai/sdk`, loaded at run time under the few types
 * these tests use. Its own declarations import `node:` modules, which pulls
 * `@types/node` into the one program `deno task check` builds over `tests/`
 * and breaks `tests/_assert.ts` (node's `assert` overloads); naming the
 * specifier through a variable keeps them out, as `lib/models/` does.
 *
 * @module
 */

/** What `messages.create()` and friends return: a promise with the raw response. */
export interface AnthropicApiPromise<T> extends Promise<T> {
  /** The parsed body and the raw `Response`. */
  withResponse(): Promise<{ data: T; response: Response }>;
}

/** A content block of a message (the kinds these tests use). */
export type AnthropicBlock =
  | { type: "text"; text: string }
  | {
    type: "tool_use";
    id: string;
    name: string;
    input: Record<string, unknown>;
  }
  | { type: "tool_result"; tool_use_id: string; content: unknown };

/** A message as the SDK returns it. */
export interface AnthropicMessage {
  /** Message id. */
  id: string;
  /** Content blocks. */
  content: AnthropicBlock[];
  /** Why it stopped. */
  stop_reason: string | null;
  /** Token usage. */
  usage: {
    input_tokens: number;
    output_tokens: number;
    cache_read_input_tokens?: number | null;
    cache_creation_input_tokens?: number | null;
  };
}

/** The SDK's streaming helper. */
export interface AnthropicMessageStream {
  /** Every raw stream event. */
  on(event: "streamEvent", fn: (e: { type: string }) => void): this;
  /** Each `input_json_delta` piece. */
  on(
    event: "inputJson",
    fn: (partial: string, snapshot: unknown) => void,
  ): this;
  /** The accumulated message at `message_stop`. */
  finalMessage(): Promise<AnthropicMessage>;
}

/** Request parameters (kept open: the SDK checks them). */
export type AnthropicParams = Record<string, unknown>;

/** Per-request options. */
export interface AnthropicRequestOptions {
  /** Query parameters added to the URL. */
  query?: Record<string, string>;
  /** Extra headers. */
  headers?: Record<string, string>;
}

/** The client surface these tests drive. */
export interface AnthropicClient {
  /** Messages. */
  messages: {
    create(
      params: AnthropicParams,
      options?: AnthropicRequestOptions,
    ): AnthropicApiPromise<AnthropicMessage>;
    stream(
      params: AnthropicParams,
      options?: AnthropicRequestOptions,
    ): AnthropicMessageStream;
    countTokens(params: AnthropicParams): Promise<{ input_tokens: number }>;
  };
  /** Beta routes (`?beta=true`, `anthropic-beta`). */
  beta: {
    messages: {
      create(
        params: AnthropicParams,
        options?: AnthropicRequestOptions,
      ): AnthropicApiPromise<AnthropicMessage>;
    };
  };
  /** Models. */
  models: { list(): AsyncIterable<{ id: string }> };
}

/** Client options. */
export interface AnthropicOptions {
  /** Base URL (without `/v1`). */
  baseURL: string;
  /** API key (`x-api-key`). */
  apiKey: string;
  /** Retries. */
  maxRetries?: number;
  /** Time-out in milliseconds. */
  timeout?: number;
  /** Headers on every request. */
  defaultHeaders?: Record<string, string>;
  /** A custom fetch. */
  fetch?: typeof fetch;
}

/** An API error as the SDK raises it. */
export interface AnthropicApiError extends Error {
  /** HTTP status. */
  status: number | undefined;
  /** Response headers. */
  headers: Headers | undefined;
  /** The parsed error body. */
  error: unknown;
}

/** An error class of the SDK. */
// deno-lint-ignore no-explicit-any
export type AnthropicErrorClass = new (...args: any[]) => AnthropicApiError;

/** The module's default export: the client class and its error classes. */
export interface AnthropicSdk {
  new (options: AnthropicOptions): AnthropicClient;
  /** Any API error. */
  APIError: AnthropicErrorClass;
  /** 429. */
  RateLimitError: AnthropicErrorClass;
  /** 5xx. */
  InternalServerError: AnthropicErrorClass;
  /** 400. */
  BadRequestError: AnthropicErrorClass;
  /** A time-out. */
  APIConnectionTimeoutError: AnthropicErrorClass;
}

const SPECIFIER = "@anthropic-ai/sdk";

/** The SDK (mapped in deno.json to `npm:@anthropic-ai/sdk@1.12.0`). */
export const Anthropic: AnthropicSdk =
  ((await import(SPECIFIER)) as { default: AnthropicSdk }).default;
