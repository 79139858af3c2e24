/**
 * The cells of the gateway benchmark: what client (fetch, the official
 * `openai` SDK), what answers (whole JSON, SSE, a 10-turn agent loop), how
 * many requests at once; each cell's job sends its requests to one base URL
 * and times them.
 *
 * @module
 */
import type OpenAI from "openai";
import {
  type ChatMessage,
  chatRequest,
  conversationStart,
  GEMINI_MODEL,
  geminiRequest,
  singleRequest,
  toolResult,
} from "./_model_upstream.ts";

/** Turns of the conversation cells. */
export const TURNS = 10;
/** Headers of every benchmark request (the key is not a key). */
export const HEADERS = {
  "content-type": "application/json",
  authorization: "Bearer sk-bench-not-a-key",
};

/** One request's timings, ms from sending: first body byte, last body byte. */
export interface Sample {
  /** First body byte. */
  first: number;
  /** Last body byte. */
  last: number;
}

/** Requests a client makes as one unit (one request, or a whole conversation). */
export type Job = (n: number) => Promise<Sample[]>;

/** A row of the benchmark: what client, what answers, how many at once. */
export interface Cell {
  /** The row's name, with its concurrency. */
  label: string;
  /** Jobs at once. */
  concurrency: number;
  /** Requests per job. */
  perJob: number;
  /** Streamed answers (first and last byte both reported). */
  stream: boolean;
  /**
   * The job against one base URL (`http://127.0.0.1:<port>`), with the
   * headers that route needs (Portkey's: which upstream).
   */
  job: (base: string, headers?: Record<string, string>) => Promise<Job>;
  /**
   * Requests per route, when not the run's (`--requests`).
   *
   * @default the run's
   */
  requests?: number;
  /**
   * Warm-up jobs per route.
   *
   * @default max(concurrency, 200 / perJob)
   */
  warm?: number;
}

function expectOk(status: number, what: string): void {
  if (status !== 200) throw new Error(`${what} answered ${status}`);
}

/**
 * Read a streamed answer; timings from `t0`.
 *
 * @param res The answer.
 * @param t0 When the request was sent.
 * @param complete Whether the stream came whole (Chat's ends with
 *   `[DONE]`; Gemini's last event has a `finishReason`).
 * @returns First and last body byte.
 */
export async function readStream(
  res: Response,
  t0: number,
  complete: (text: string) => boolean = (t) => t.endsWith("data: [DONE]\n\n"),
): Promise<Sample> {
  expectOk(res.status, "stream");
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let first = -1;
  let text = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (first < 0) first = performance.now() - t0;
    text += dec.decode(value, { stream: true });
  }
  const last = performance.now() - t0;
  if (!complete(text)) {
    throw new Error(`stream ended early: ${JSON.stringify(text.slice(-80))}`);
  }
  return { first, last };
}

/** One request at a time through fetch, whole JSON or SSE. */
export function fetchSingle(stream: boolean): Cell["job"] {
  return (base, extra = {}) =>
    Promise.resolve(async (n) => {
      const body = JSON.stringify(singleRequest(n, stream));
      const t0 = performance.now();
      const res = await fetch(`${base}/v1/chat/completions`, {
        method: "POST",
        headers: { ...HEADERS, ...extra },
        body,
      });
      if (stream) return [await readStream(res, t0)];
      const answer = await res.json();
      const t = performance.now() - t0;
      expectOk(res.status, JSON.stringify(answer).slice(0, 200));
      return [{ first: t, last: t }];
    });
}

/** One Gemini `generateContent` request at a time through fetch, whole or streamed. */
export function fetchGemini(stream: boolean): Cell["job"] {
  return (base, extra = {}) =>
    Promise.resolve(async (n) => {
      const body = JSON.stringify(geminiRequest(n));
      const t0 = performance.now();
      const res = await fetch(
        `${base}/v1beta/models/${GEMINI_MODEL}:${
          stream ? "streamGenerateContent?alt=sse" : "generateContent"
        }`,
        {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "x-goog-api-key": "bench-not-a-key",
            ...extra,
          },
          body,
        },
      );
      if (stream) {
        return [
          await readStream(
            res,
            t0,
            (t) =>
              t.endsWith("\r\n\r\n") && t.includes('"finishReason":"STOP"'),
          ),
        ];
      }
      const answer = await res.json();
      const t = performance.now() - t0;
      expectOk(res.status, JSON.stringify(answer).slice(0, 200));
      return [{ first: t, last: t }];
    });
}

/**
 * An agent loop: each turn sends the history, appends the answer and a
 * ~2 KB tool result; `lastTurn` collects some last requests' body sizes.
 */
export function fetchConversation(lastTurn: number[]): Cell["job"] {
  return (base, extra = {}) =>
    Promise.resolve(async (n) => {
      const messages: ChatMessage[] = conversationStart(n);
      const out: Sample[] = [];
      for (let turn = 1; turn <= TURNS; turn++) {
        const body = JSON.stringify(chatRequest(messages, false));
        if (turn === TURNS && n % 16 === 0) lastTurn.push(body.length);
        const t0 = performance.now();
        const res = await fetch(`${base}/v1/chat/completions`, {
          method: "POST",
          headers: { ...HEADERS, ...extra },
          body,
        });
        const answer = await res.json();
        const t = performance.now() - t0;
        expectOk(res.status, JSON.stringify(answer).slice(0, 200));
        out.push({ first: t, last: t });
        const msg = answer.choices[0].message;
        messages.push(msg, toolResult(msg.tool_calls[0].id, n, turn));
      }
      return out;
    });
}

/** One request at a time through the official `openai` client. */
export function sdkSingle(stream: boolean): Cell["job"] {
  return async (base, extra = {}) => {
    const { default: OpenAIClient } = await import("openai");
    const client = new OpenAIClient({
      baseURL: `${base}/v1`,
      apiKey: "sk-bench-not-a-key",
      maxRetries: 0,
      defaultHeaders: extra,
    });
    return async (n) => {
      const body = singleRequest(n, stream);
      const t0 = performance.now();
      if (!stream) {
        const c = await client.chat.completions.create(
          body as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming,
        );
        const t = performance.now() - t0;
        if (!c.choices[0].message.tool_calls?.length) {
          throw new Error("answer without its tool call");
        }
        return [{ first: t, last: t }];
      }
      const chunks = await client.chat.completions.create(
        body as unknown as OpenAI.ChatCompletionCreateParamsStreaming,
      );
      let first = -1;
      let usage = false;
      for await (const chunk of chunks) {
        if (first < 0) first = performance.now() - t0;
        if (chunk.usage) usage = true;
      }
      const last = performance.now() - t0;
      if (!usage) throw new Error("stream without its usage chunk");
      return [{ first, last }];
    };
  };
}

/**
 * A cell.
 *
 * @param label What client and answers.
 * @param concurrency Jobs at once.
 * @param job The job.
 * @param options Requests per job (1), streamed answers (false).
 * @returns The cell.
 */
export function cell(
  label: string,
  concurrency: number,
  job: Cell["job"],
  options: { perJob?: number; stream?: boolean } = {},
): Cell {
  const { perJob = 1, stream = false } = options;
  return {
    label: `${label}, c=${concurrency}`,
    concurrency,
    perJob,
    stream,
    job,
  };
}

/** The conversation cells' label. */
export const CONVERSATION = `fetch, conversation (${TURNS} turns)`;

/** Every cell, in the order run; `lastTurn` collects conversation sizes. */
export function allCells(lastTurn: number[]): Cell[] {
  return [
    cell("fetch, JSON", 1, fetchSingle(false)),
    cell("fetch, SSE", 1, fetchSingle(true), { stream: true }),
    cell("fetch, JSON", 8, fetchSingle(false)),
    cell("fetch, SSE", 8, fetchSingle(true), { stream: true }),
    cell(CONVERSATION, 1, fetchConversation(lastTurn), { perJob: TURNS }),
    cell(CONVERSATION, 8, fetchConversation(lastTurn), { perJob: TURNS }),
    cell("openai SDK, JSON", 1, sdkSingle(false)),
    cell("openai SDK, SSE", 1, sdkSingle(true), { stream: true }),
    cell("fetch, Gemini JSON", 1, fetchGemini(false)),
    cell("fetch, Gemini SSE", 1, fetchGemini(true), { stream: true }),
  ];
}
