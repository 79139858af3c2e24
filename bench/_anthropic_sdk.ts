/**
 * The official `@anthropic-ai/sdk`, loaded at run time under the few types
 * the gateway loop uses. Its own declarations import `node:` modules, which
 * pull `@types/node` into the one program `deno task check` builds over
 * `tests/` and `bench/` and break `tests/_assert.ts` (node's `assert`
 * overloads); naming the specifier through a variable keeps them out, as
 * `lib/models/` does.
 *
 * @module
 */

/** A content block of a message (the kinds the loop uses). */
export type AnthropicBlock =
  | { type: "text"; text: string }
  | {
    type: "tool_use";
    id: string;
    name: string;
    input: Record<string, unknown>;
  }
  | {
    type: "tool_result";
    tool_use_id: string;
    content: string;
    is_error?: boolean;
  };

/** A message as the SDK returns it. */
export interface AnthropicMessage {
  /** Content blocks. */
  content: AnthropicBlock[];
  /** Why it stopped. */
  stop_reason: string | null;
}

/** The SDK's streaming helper (`messages.stream`). */
export interface AnthropicMessageStream {
  /** The raw `Response` (its headers), once it has arrived. */
  withResponse(): Promise<{ response: Response }>;
  /** The accumulated message at `message_stop`. */
  finalMessage(): Promise<AnthropicMessage>;
}

/** What `messages.create()` returns: the message, or it with the raw response. */
export interface AnthropicApiPromise extends Promise<AnthropicMessage> {
  /** The message and the raw `Response` (its headers). */
  withResponse(): Promise<{ data: AnthropicMessage; response: Response }>;
}

/** The client surface the loop drives. */
export interface AnthropicClient {
  /** Messages. */
  messages: {
    create(
      params: Record<string, unknown>,
      options?: { headers?: Record<string, string> },
    ): AnthropicApiPromise;
    stream(
      params: Record<string, unknown>,
      options?: { headers?: Record<string, string> },
    ): AnthropicMessageStream;
  };
}

/** The module's default export: the client class. */
export type AnthropicSdk = new (options: {
  baseURL: string;
  apiKey: string;
  maxRetries?: number;
  defaultHeaders?: Record<string, string>;
}) => AnthropicClient;

const SPECIFIER = "@anthropic-ai/sdk";

/**
 * The SDK's client class (mapped in deno.json to `npm:@anthropic-ai/sdk`),
 * imported on first use.
 *
 * @returns The client class.
 */
export async function loadAnthropic(): Promise<AnthropicSdk> {
  const mod = await import(SPECIFIER) as { default: AnthropicSdk };
  return mod.default;
}
