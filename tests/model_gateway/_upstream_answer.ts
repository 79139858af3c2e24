/**
 * Scripted answers of the model-gateway test upstream, as plain data, and the
 * helpers every wire's renderer shares (the deterministic cutting into
 * deltas, usage defaults, ids).
 *
 * @module
 */

/** The routes the upstream speaks. */
export type UpstreamRoute =
  | "chat"
  | "responses"
  | "messages"
  | "count_tokens"
  | "models";

/** One tool call of a scripted answer. */
export interface UpstreamToolCall {
  /** The call id (`call_<n>_<i>` / `toolu_<n>_<i>` when absent). */
  id?: string;
  /** Tool name. */
  name: string;
  /** Arguments: an object (sent as its JSON) or the exact text to send. */
  arguments: Record<string, unknown> | string;
}

/**
 * Token usage of a scripted answer, mapped onto each API: OpenAI
 * `prompt_tokens`/`input_tokens` = `input_tokens`, `cached_tokens` in the
 * details; Anthropic `input_tokens`, `cache_read_input_tokens` =
 * `cached_tokens`, `cache_creation_input_tokens`.
 */
export interface UpstreamUsage {
  /** @default 11 */
  input_tokens?: number;
  /** @default 7 */
  output_tokens?: number;
  /** Cache reads. @default 0 */
  cached_tokens?: number;
  /** Anthropic cache writes. @default 0 */
  cache_creation_input_tokens?: number;
  /** OpenAI reasoning tokens. @default 0 */
  reasoning_tokens?: number;
}

/** An error body in the API's own shape. */
export interface UpstreamError {
  /** Message. */
  message: string;
  /** Error type (defaults by status and API). */
  type?: string;
  /** OpenAI `code`. @default null */
  code?: string | null;
}

/** One scripted answer, plain data. */
export interface UpstreamAnswer {
  /**
   * The route this answer is for. Answers without one serve the next
   * chat/responses/messages request; `count_tokens` and `models` requests
   * take only answers aimed at them and otherwise get a default answer.
   */
  route?: UpstreamRoute;
  /** Assistant text. */
  text?: string;
  /** Tool calls (several: parallel calls). */
  toolCalls?: UpstreamToolCall[];
  /** Usage (count_tokens answers `usage.input_tokens`). */
  usage?: UpstreamUsage;
  /** Model name (default: the request's `model`). */
  model?: string;
  /** Finish reason / stop reason (derived when absent). */
  stopReason?: string;
  /** Model ids of a `models` answer. */
  models?: string[];
  /** HTTP status (default 200; 400 when `error` is set). */
  status?: number;
  /** Extra response headers (`retry-after`, …). */
  headers?: Record<string, string>;
  /** Answer with an error body in the API's shape (also when status ≥ 400). */
  error?: string | UpstreamError;
  /** Send this body as is (JSON content type unless `headers` say else). */
  body?: string;
  /** Characters per text or argument delta. @default 8 */
  chunkSize?: number;
  /**
   * Close the connection after this many chunks (SSE events) with no final
   * event; a whole (non-streaming) body is cut after its first half.
   */
  cutAfterChunks?: number;
  /** Send this many chunks, then nothing more until the client goes away. */
  stallAfterChunks?: number;
  /** Delay between chunks (milliseconds). */
  chunkDelayMs?: number;
  /** Accept the request and never answer. */
  hang?: boolean;
}

/** What the renderer needs to know of the request. */
export interface RenderContext {
  /** The route. */
  route: UpstreamRoute;
  /** Exchange number, 1-based (makes the ids). */
  n: number;
  /** The request's parsed JSON body (null when none). */
  request: Record<string, unknown> | null;
  /** The request carried `anthropic-version` (models list shape). */
  anthropic: boolean;
}

/** The bytes of one answer. */
export interface RenderedAnswer {
  /** HTTP status. */
  status: number;
  /** Headers (framing headers excluded). */
  headers: Record<string, string>;
  /** Server-sent events (one per chunk), or false for a whole body. */
  stream: boolean;
  /** The body in the chunks it is written in: one per SSE event. */
  chunks: string[];
  /** All chunks joined: the whole body as planned. */
  body: string;
}

/** A fixed creation time (seconds). */
export const CREATED = 1_700_000_000;
const DEFAULT_USAGE: Required<UpstreamUsage> = {
  input_tokens: 11,
  output_tokens: 7,
  cached_tokens: 0,
  cache_creation_input_tokens: 0,
  reasoning_tokens: 0,
};

/** A JSON object being built. */
export type Item = Record<string, unknown>;

/**
 * Split text into pieces of `size` characters (code points), the way the
 * upstream cuts its deltas.
 *
 * @param text The text.
 * @param size Characters per piece.
 * @returns The pieces (none for empty text).
 */
export function pieces(text: string, size: number): string[] {
  const chars = [...text];
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) {
    out.push(chars.slice(i, i + size).join(""));
  }
  return out;
}

/** Usage with the defaults filled in. */
export function usageOf(a: UpstreamAnswer): Required<UpstreamUsage> {
  return { ...DEFAULT_USAGE, ...a.usage };
}

/** A call's arguments as the text sent. */
export function argsText(call: UpstreamToolCall): string {
  return typeof call.arguments === "string"
    ? call.arguments
    : JSON.stringify(call.arguments);
}

/** The answering model: the answer's, else the request's. */
export function modelOf(a: UpstreamAnswer, ctx: RenderContext): string {
  const m = ctx.request?.model;
  return a.model ?? (typeof m === "string" ? m : "upstream-model");
}
