/**
 * The model side of the gateway benchmark: a minimal, fast OpenAI Chat
 * Completions upstream (`deno run --allow-net=127.0.0.1
 * bench/_model_upstream.ts` prints `port <n>`; `POST /v1/chat/completions`,
 * and Gemini's `POST /v1beta/models/{m}:generateContent` and
 * `:streamGenerateContent` with the same answer in three chunks;
 * whole JSON or SSE in nine chunks, each answer a short text, one tool call
 * and the usage; it answers at once, or like a model for the model names of
 * {@linkcode MODEL_LIKE}), and the request bodies the benchmark
 * sends it: single requests and agent-loop conversations whose history grows.
 *
 * @module
 */

const enc = new TextEncoder();
const MODEL = "gpt-bench-mini";
const TEXT = ["Let me look", " that order up."];
const TOOL = "get_order_details";

/** Tools offered by every request (two, with JSON Schema parameters). */
export const BENCH_TOOLS = [
  {
    type: "function",
    function: {
      name: TOOL,
      description: "Get the status and details of an order.",
      parameters: {
        type: "object",
        properties: {
          order_id: {
            type: "string",
            description: "The order id, such as '#W0000000'.",
          },
        },
        required: ["order_id"],
      },
    },
  },
  {
    type: "function",
    function: {
      name: "cancel_pending_order",
      description: "Cancel a pending order. The user must confirm first.",
      parameters: {
        type: "object",
        properties: {
          order_id: { type: "string" },
          reason: {
            type: "string",
            enum: ["no longer needed", "ordered by mistake"],
          },
        },
        required: ["order_id", "reason"],
      },
    },
  },
];

const SYSTEM =
  "You are a customer service agent for an online retail store. Help the user with their orders: look orders up, explain their status, and cancel a pending order only after the user confirms. Use the tools; never make up order details. Answer briefly.";

/** One chat message as the client sends it. */
export type ChatMessage = Record<string, unknown>;

/**
 * A single-turn request body: system prompt, one user message (unique per
 * `n`, so every request is its own conversation), the tools.
 *
 * @param n Request number.
 * @param stream Ask for SSE (with usage in the last chunk).
 * @returns The body object.
 */
export function singleRequest(
  n: number,
  stream: boolean,
): Record<string, unknown> {
  return chatRequest([
    { role: "system", content: SYSTEM },
    {
      role: "user",
      content: `Hi, where is my order #W${
        String(n).padStart(7, "0")
      }? It should have arrived by now.`,
    },
  ], stream);
}

/**
 * The body of a Chat Completions request over `messages`.
 *
 * @param messages The conversation so far.
 * @param stream Ask for SSE.
 * @returns The body object.
 */
export function chatRequest(
  messages: ChatMessage[],
  stream: boolean,
): Record<string, unknown> {
  return {
    model: MODEL,
    messages,
    tools: BENCH_TOOLS,
    temperature: 0,
    ...(stream
      ? { stream: true, stream_options: { include_usage: true } }
      : {}),
  };
}

/**
 * The first messages of conversation `n` (an agent loop then appends the
 * model's answer and a tool result per turn).
 *
 * @param n Conversation number.
 * @returns System prompt and user message.
 */
export function conversationStart(n: number): ChatMessage[] {
  return [
    { role: "system", content: SYSTEM },
    {
      role: "user",
      content:
        `Conversation ${n}: please check every order on my account (user mia_li_${n}) and tell me which ones are still pending.`,
    },
  ];
}

/**
 * A tool result of about 2 KB (an order with its items), different per
 * conversation and turn.
 *
 * @param callId The tool call answered.
 * @param n Conversation number.
 * @param turn Turn number.
 * @returns The `tool` message.
 */
export function toolResult(
  callId: string,
  n: number,
  turn: number,
): ChatMessage {
  const items = Array.from({ length: 9 }, (_, i) => ({
    name: ["T-Shirt", "Desk Lamp", "Water Bottle"][i % 3],
    product_id: `${8000000000 + n * 100 + turn * 10 + i}`,
    item_id: `${1000000000 + n * 100 + turn * 10 + i}`,
    price: 10 + ((n + turn + i) % 90) + 0.99,
    options: { color: "blue", size: "M", material: "cotton", style: "crew" },
  }));
  return {
    role: "tool",
    tool_call_id: callId,
    content: JSON.stringify({
      order_id: `#W${n}${turn}`,
      user_id: `mia_li_${n}`,
      address: {
        address1: `${100 + turn} Elm Street`,
        address2: "Suite 4",
        city: "Fort Worth",
        country: "USA",
        state: "TX",
        zip: "76109",
      },
      items,
      status: turn % 2 === 0 ? "pending" : "delivered",
      payment_history: [{
        transaction_type: "payment",
        amount: 312.45,
        payment_method_id: `credit_card_${n}`,
      }],
    }),
  };
}

function completion(n: number, promptChars: number): string {
  return JSON.stringify({
    id: `chatcmpl-bench-${n}`,
    object: "chat.completion",
    created: 1_790_000_000,
    model: MODEL,
    choices: [{
      index: 0,
      message: {
        role: "assistant",
        content: TEXT.join(""),
        refusal: null,
        tool_calls: [{
          id: `call_bench_${n}`,
          type: "function",
          function: {
            name: TOOL,
            arguments: `{"order_id":"#W${String(n).padStart(7, "0")}"}`,
          },
        }],
      },
      logprobs: null,
      finish_reason: "tool_calls",
    }],
    usage: usage(promptChars),
    system_fingerprint: "fp_bench",
  });
}

function usage(promptChars: number) {
  const prompt = Math.ceil(promptChars / 4);
  return {
    prompt_tokens: prompt,
    completion_tokens: 24,
    total_tokens: prompt + 24,
    prompt_tokens_details: { cached_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0 },
  };
}

/** The SSE chunks of answer `n`: role, text in two, the call in three, finish, usage, `[DONE]`. */
function chunks(n: number, promptChars: number): Uint8Array[] {
  const head = {
    id: `chatcmpl-bench-${n}`,
    object: "chat.completion.chunk",
    created: 1_790_000_000,
    model: MODEL,
    system_fingerprint: "fp_bench",
  };
  const delta = (d: Record<string, unknown>, finish: string | null = null) => ({
    ...head,
    choices: [{ index: 0, delta: d, logprobs: null, finish_reason: finish }],
  });
  const call = (f: Record<string, unknown>, first: boolean) => ({
    tool_calls: [{
      index: 0,
      ...(first ? { id: `call_bench_${n}`, type: "function" } : {}),
      function: f,
    }],
  });
  const events: unknown[] = [
    delta({ role: "assistant", content: "", refusal: null }),
    delta({ content: TEXT[0] }),
    delta({ content: TEXT[1] }),
    delta(call({ name: TOOL, arguments: "" }, true)),
    delta(call({ arguments: `{"order_id":` }, false)),
    delta(call({ arguments: `"#W${String(n).padStart(7, "0")}"}` }, false)),
    delta({}, "tool_calls"),
    { ...head, choices: [], usage: usage(promptChars) },
  ];
  return [
    ...events.map((e) => enc.encode(`data: ${JSON.stringify(e)}\n\n`)),
    enc.encode("data: [DONE]\n\n"),
  ];
}

/**
 * The model names that make the upstream answer like a model: 300 ms then
 * a ~2 KB JSON answer, or 150 ms to the first chunk then 40 chunks 20 ms
 * apart. Any other model answers at once.
 */
export const MODEL_LIKE = {
  /** 300 ms, then a ~2 KB JSON answer. */
  json: "bench-json-300ms",
  /** 150 ms to the first chunk, then 40 chunks 20 ms apart. */
  stream: "bench-stream-40",
} as const;

/** A text of about 2 KB, the same every time. */
const LONG_TEXT = Array.from(
  { length: 48 },
  (_, i) =>
    `Order #W${String(4_000_000 + i).padStart(7, "0")} shipped on day ${
      i + 1
    }. `,
).join("");

/** A whole answer of about 2 KB (text only). */
function longCompletion(n: number, promptChars: number): string {
  return JSON.stringify({
    id: `chatcmpl-bench-${n}`,
    object: "chat.completion",
    created: 1_790_000_000,
    model: MODEL_LIKE.json,
    choices: [{
      index: 0,
      message: { role: "assistant", content: LONG_TEXT, refusal: null },
      logprobs: null,
      finish_reason: "stop",
    }],
    usage: usage(promptChars),
    system_fingerprint: "fp_bench",
  });
}

/** The 40 text chunks of a model-like stream, then its finish, usage and `[DONE]`. */
function modelLikeChunks(n: number, promptChars: number): Uint8Array[] {
  const head = {
    id: `chatcmpl-bench-${n}`,
    object: "chat.completion.chunk",
    created: 1_790_000_000,
    model: MODEL_LIKE.stream,
    system_fingerprint: "fp_bench",
  };
  const words = LONG_TEXT.split(" ");
  const per = Math.ceil(words.length / 40);
  const events: unknown[] = Array.from({ length: 40 }, (_, i) => ({
    ...head,
    choices: [{
      index: 0,
      delta: {
        ...(i === 0 ? { role: "assistant" } : {}),
        content: words.slice(i * per, (i + 1) * per).join(" ") + " ",
      },
      logprobs: null,
      finish_reason: i === 39 ? "stop" : null,
    }],
  }));
  events.push({ ...head, choices: [], usage: usage(promptChars) });
  return [
    ...events.map((e) => enc.encode(`data: ${JSON.stringify(e)}\n\n`)),
    enc.encode("data: [DONE]\n\n"),
  ];
}

/** The Gemini model the benchmark's Gemini cells name (in the path). */
export const GEMINI_MODEL = "gemini-bench-flash";

/**
 * A single-turn Gemini `generateContent` body: the same system prompt,
 * user message and tools as {@linkcode singleRequest}, in Gemini's shape.
 *
 * @param n Request number.
 * @returns The body object.
 */
export function geminiRequest(n: number): Record<string, unknown> {
  return {
    systemInstruction: { parts: [{ text: SYSTEM }] },
    contents: [{
      role: "user",
      parts: [{
        text: `Hi, where is my order #W${
          String(n).padStart(7, "0")
        }? It should have arrived by now.`,
      }],
    }],
    tools: [{
      functionDeclarations: BENCH_TOOLS.map((t) => ({
        name: t.function.name,
        description: t.function.description,
        parametersJsonSchema: t.function.parameters,
      })),
    }],
    generationConfig: { temperature: 0 },
  };
}

/** Gemini answer `n`'s pieces: the text in two, then the call with the finish and usage (one piece when whole). */
function geminiPieces(
  n: number,
  promptChars: number,
): Record<string, unknown>[] {
  const prompt = Math.ceil(promptChars / 4);
  const usageMetadata = (out: number) => ({
    promptTokenCount: prompt,
    candidatesTokenCount: out,
    totalTokenCount: prompt + out,
  });
  const piece = (parts: unknown[], out: number, last: boolean) => ({
    candidates: [{
      content: { role: "model", parts },
      ...(last ? { finishReason: "STOP" } : {}),
      index: 0,
    }],
    usageMetadata: usageMetadata(out),
    modelVersion: GEMINI_MODEL,
    responseId: `gemini-bench-${n}`,
  });
  return [
    piece([{ text: TEXT[0] }], 4, false),
    piece([{ text: TEXT[1] }], 8, false),
    piece(
      [{
        functionCall: {
          name: TOOL,
          args: { order_id: `#W${String(n).padStart(7, "0")}` },
        },
      }],
      24,
      true,
    ),
  ];
}

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Serve the upstream on 127.0.0.1.
 *
 * @param port Port (0 picks a free one).
 * @returns The server.
 */
export function serveModelUpstream(port = 0): Deno.HttpServer<Deno.NetAddr> {
  let n = 0;
  return Deno.serve(
    { hostname: "127.0.0.1", port, onListen: () => {} },
    async (req) => {
      const path = new URL(req.url).pathname;
      const gemini =
        /^\/v1beta\/models\/[^/:]+:(generateContent|streamGenerateContent)$/
          .exec(path);
      if (req.method === "POST" && gemini) {
        const text = await req.text();
        n++;
        const pieces = geminiPieces(n, text.length);
        if (gemini[1] === "generateContent") {
          const last = pieces[pieces.length - 1];
          return Response.json({
            ...last,
            candidates: [{
              content: {
                role: "model",
                parts: pieces.flatMap((p) =>
                  (p.candidates as { content: { parts: unknown[] } }[])[0]
                    .content.parts
                ),
              },
              finishReason: "STOP",
              index: 0,
            }],
          });
        }
        const events = pieces.map((p) =>
          enc.encode(`data: ${JSON.stringify(p)}\r\n\r\n`)
        );
        let i = 0;
        return new Response(
          new ReadableStream<Uint8Array>({
            pull(ctrl) {
              if (i < events.length) ctrl.enqueue(events[i++]);
              else ctrl.close();
            },
          }, { highWaterMark: 0 }),
          { headers: { "content-type": "text/event-stream" } },
        );
      }
      if (req.method !== "POST" || path !== "/v1/chat/completions") {
        return Response.json({
          error: { type: "not_found", message: `No route ${path}` },
        }, { status: 404 });
      }
      const text = await req.text();
      const body = JSON.parse(text) as { stream?: boolean; model?: string };
      n++;
      if (body.model === MODEL_LIKE.json) {
        await wait(300);
        return new Response(longCompletion(n, text.length), {
          headers: { "content-type": "application/json" },
        });
      }
      if (body.model === MODEL_LIKE.stream) {
        const pieces = modelLikeChunks(n, text.length);
        let i = 0;
        return new Response(
          new ReadableStream<Uint8Array>({
            async pull(ctrl) {
              // 150 ms to the first chunk, 20 ms between text chunks; the
              // usage chunk and [DONE] follow the last at once.
              if (i < 40) await wait(i === 0 ? 150 : 20);
              if (i < pieces.length) ctrl.enqueue(pieces[i++]);
              else ctrl.close();
            },
          }, { highWaterMark: 0 }),
          {
            headers: {
              "content-type": "text/event-stream; charset=utf-8",
              "cache-control": "no-cache",
            },
          },
        );
      }
      if (!body.stream) {
        return new Response(completion(n, text.length), {
          headers: { "content-type": "application/json" },
        });
      }
      const pieces = chunks(n, text.length);
      let i = 0;
      return new Response(
        new ReadableStream<Uint8Array>({
          pull(ctrl) {
            if (i < pieces.length) ctrl.enqueue(pieces[i++]);
            else ctrl.close();
          },
        }, { highWaterMark: 0 }),
        {
          headers: {
            "content-type": "text/event-stream; charset=utf-8",
            "cache-control": "no-cache",
          },
        },
      );
    },
  );
}

if (import.meta.main) {
  const server = serveModelUpstream();
  console.log(`port ${server.addr.port}`);
  Deno.addSignalListener("SIGTERM", () => server.shutdown());
  await server.finished;
}
