/**
 * The test upstream's renderer: a scripted answer and a request to the exact
 * bytes the API sends (OpenAI Chat Completions, OpenAI Responses, Anthropic
 * Messages, whole or as server-sent events; count_tokens; the model lists;
 * each API's error shape). Same answer and request, same bytes: ids count
 * per exchange, the clock is fixed, text and arguments are cut every
 * `chunkSize` characters.
 *
 * @module
 */
import {
  CREATED,
  type RenderContext,
  type RenderedAnswer,
  type UpstreamAnswer,
  type UpstreamError,
  type UpstreamRoute,
  usageOf,
} from "./_upstream_answer.ts";
import {
  chatChunks,
  chatWhole,
  responseObject,
  responsesEvents,
} from "./_upstream_openai.ts";
import { messageObject, messagesEvents } from "./_upstream_anthropic.ts";

/**
 * Render a scripted answer for a request.
 *
 * @param answer The scripted answer.
 * @param ctx The request.
 * @returns Status, headers and chunks.
 */
export function renderAnswer(
  answer: UpstreamAnswer,
  ctx: RenderContext,
): RenderedAnswer {
  const openaiShape = isOpenAiShape(ctx);
  const idHeader = openaiShape ? "x-request-id" : "request-id";
  const base = { [idHeader]: `req_up${ctx.n}` };
  if (answer.body !== undefined) {
    return whole(answer.status ?? 200, answer.body, {
      ...base,
      ...answer.headers,
    });
  }
  const status = answer.status ?? (answer.error === undefined ? 200 : 400);
  const headers = { ...base, ...answer.headers };
  if (answer.error !== undefined || status >= 400) {
    const body = openaiShape
      ? openaiError(status, answer.error)
      : anthropicError(status, answer.error, ctx.n);
    return whole(status, JSON.stringify(body), headers);
  }
  const stream = ctx.request?.stream === true &&
    ctx.route !== "count_tokens" && ctx.route !== "models";
  const events = RENDERERS[ctx.route](answer, ctx, stream);
  if (!stream) return whole(status, events[0], headers);
  return {
    status,
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      ...headers,
    },
    stream: true,
    chunks: events,
    body: events.join(""),
  };
}

/**
 * The route of a request, or null for one the upstream does not speak.
 *
 * @param method HTTP method.
 * @param pathname Path without the query.
 * @returns The route.
 */
export function routeOf(
  method: string,
  pathname: string,
): UpstreamRoute | null {
  if (method === "GET" && pathname === "/v1/models") return "models";
  if (method !== "POST") return null;
  return ({
    "/v1/chat/completions": "chat",
    "/v1/responses": "responses",
    "/v1/messages": "messages",
    "/v1/messages/count_tokens": "count_tokens",
  } as Record<string, UpstreamRoute>)[pathname] ?? null;
}

/** One parsed server-sent event. */
export interface SseEvent {
  /** The `event:` name, or null. */
  event: string | null;
  /** The joined `data:` lines. */
  data: string;
}

/**
 * Parse server-sent events text (`\n\n`-separated; comments skipped).
 *
 * @param text The stream's text.
 * @returns The events in order.
 */
export function parseSse(text: string): SseEvent[] {
  const out: SseEvent[] = [];
  for (const block of text.replaceAll("\r\n", "\n").split("\n\n")) {
    let event: string | null = null;
    const data: string[] = [];
    for (const line of block.split("\n")) {
      if (line.startsWith("event:")) event = line.slice(6).trim();
      else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
    }
    if (event !== null || data.length) {
      out.push({ event, data: data.join("\n") });
    }
  }
  return out;
}

function whole(
  status: number,
  body: string,
  headers: Record<string, string>,
): RenderedAnswer {
  return {
    status,
    headers: { "content-type": "application/json", ...headers },
    stream: false,
    chunks: [body],
    body,
  };
}

function isOpenAiShape(ctx: RenderContext): boolean {
  if (ctx.route === "models") return !ctx.anthropic;
  return ctx.route === "chat" || ctx.route === "responses";
}

const OPENAI_ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "invalid_request_error",
  403: "permission_denied",
  404: "invalid_request_error",
  429: "rate_limit_exceeded",
  500: "server_error",
  503: "server_error",
};
const ANTHROPIC_ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  529: "overloaded_error",
};

function errorParts(
  status: number,
  error: string | UpstreamError | undefined,
  types: Record<number, string>,
): UpstreamError {
  const e = typeof error === "string" ? { message: error } : error;
  return {
    message: e?.message ?? `Upstream error ${status}`,
    type: e?.type ?? types[status] ?? (status >= 500 ? types[500] : types[400]),
    code: e?.code ?? null,
  };
}

function openaiError(status: number, error?: string | UpstreamError): unknown {
  const e = errorParts(status, error, OPENAI_ERROR_TYPES);
  return {
    error: { message: e.message, type: e.type, param: null, code: e.code },
  };
}

function anthropicError(
  status: number,
  error: string | UpstreamError | undefined,
  n: number,
): unknown {
  const e = errorParts(status, error, ANTHROPIC_ERROR_TYPES);
  return {
    type: "error",
    error: { type: e.type, message: e.message },
    request_id: `req_up${n}`,
  };
}

type Renderer = (
  a: UpstreamAnswer,
  ctx: RenderContext,
  stream: boolean,
) => string[];

const RENDERERS: Record<UpstreamRoute, Renderer> = {
  chat: (a, ctx, stream) => stream ? chatChunks(a, ctx) : [chatWhole(a, ctx)],
  responses: (a, ctx, stream) =>
    stream ? responsesEvents(a, ctx) : [JSON.stringify(responseObject(a, ctx))],
  messages: (a, ctx, stream) =>
    stream ? messagesEvents(a, ctx) : [JSON.stringify(messageObject(a, ctx))],
  count_tokens: (a) => [
    JSON.stringify({ input_tokens: usageOf(a).input_tokens }),
  ],
  models: (a, ctx) => [JSON.stringify(modelList(a, ctx))],
};

function modelList(a: UpstreamAnswer, ctx: RenderContext): unknown {
  if (ctx.anthropic) {
    const ids = a.models ?? ["claude-up-1", "claude-up-2"];
    return {
      data: ids.map((id) => ({
        type: "model",
        id,
        display_name: id,
        created_at: "2025-01-01T00:00:00Z",
      })),
      has_more: false,
      first_id: ids[0] ?? null,
      last_id: ids.at(-1) ?? null,
    };
  }
  const ids = a.models ?? ["gpt-up-1", "gpt-up-2"];
  return {
    object: "list",
    data: ids.map((id) => ({
      id,
      object: "model",
      created: CREATED,
      owned_by: "upstream",
    })),
  };
}
