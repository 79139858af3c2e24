/**
 * A scripted Gemini-API server on 127.0.0.1 for tests (and for recording
 * Gemini CLI offline): `POST /{version}/models/{model}:generateContent`,
 * `:streamGenerateContent` (`?alt=sse`, events ending `\r\n\r\n` as
 * Google's do) and `:countTokens`, each answered by a policy the caller
 * gives; every request is kept (path, query, headers, body).
 *
 * @module
 */

/** A request the model received. */
export interface GeminiModelRequest {
  /** HTTP method. */
  method: string;
  /** Path. */
  path: string;
  /** Query string (`""` or `?…`). */
  query: string;
  /** Headers (lower-case names). */
  headers: Record<string, string>;
  /** The model the path names. */
  model: string;
  /** `generateContent`, `streamGenerateContent`, `countTokens`. */
  api: string;
  /** The body, parsed. */
  body: Record<string, unknown>;
  /** The body's bytes as they came. */
  raw: string;
  /** When it arrived (ms since the epoch, high resolution). */
  t: number;
}

/** What the policy answers. */
export type GeminiModelAnswer =
  | {
    /** A whole answer (a `GenerateContentResponse`, or an error body). */
    json: unknown;
    /** @default 200 */
    status?: number;
    /** Extra headers (`retry-after`). */
    headers?: Record<string, string>;
  }
  | {
    /** Stream chunks (`GenerateContentResponse`s), one event each. */
    chunks: unknown[];
    /** Cut the connection after this many chunks (no end). */
    cutAfter?: number;
  };

/** A running scripted model. */
export interface GeminiModel {
  /** Its base URL (as the SDK's `httpOptions.baseUrl`). */
  url: string;
  /** Every request, in arrival order. */
  requests: GeminiModelRequest[];
  /** Every answer's bytes as sent, in order (streams joined). */
  answers: Uint8Array[];
  /** Stop it. */
  close(): Promise<void>;
  /** Stop it (`await using`). */
  [Symbol.asyncDispose](): Promise<void>;
}

const enc = new TextEncoder();

/**
 * A whole answer: the text and calls as one model turn.
 *
 * @param o Text, calls, usage, finish reason, thought text.
 * @returns A `GenerateContentResponse`.
 */
export function geminiAnswer(o: {
  text?: string;
  thought?: string;
  calls?: { name: string; args: Record<string, unknown>; id?: string }[];
  usage?: Record<string, number>;
  finish?: string;
  model?: string;
}): Record<string, unknown> {
  return {
    candidates: [{
      content: {
        role: "model",
        parts: [
          ...(o.thought ? [{ text: o.thought, thought: true }] : []),
          ...(o.text !== undefined ? [{ text: o.text }] : []),
          ...(o.calls ?? []).map((c) => ({ functionCall: c })),
        ],
      },
      finishReason: o.finish ?? "STOP",
      index: 0,
    }],
    usageMetadata: o.usage ?? {
      promptTokenCount: 10,
      candidatesTokenCount: 5,
      totalTokenCount: 15,
    },
    modelVersion: o.model ?? "gemini-test-model",
    responseId: `resp_${crypto.randomUUID().slice(0, 8)}`,
  };
}

/**
 * Start the scripted model.
 *
 * @param policy What to answer to each request.
 * @returns The running model.
 */
export function startGeminiModel(
  policy: (r: GeminiModelRequest) => GeminiModelAnswer,
): GeminiModel {
  const requests: GeminiModelRequest[] = [];
  const answers: Uint8Array[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      const url = new URL(req.url);
      const m = /\/models\/([^/:]+):([A-Za-z]+)$/.exec(url.pathname);
      const t = performance.timeOrigin + performance.now();
      const raw = await req.text();
      let body: Record<string, unknown> = {};
      try {
        body = raw ? JSON.parse(raw) : {};
      } catch { /* kept as {} */ }
      const headers: Record<string, string> = {};
      req.headers.forEach((v, k) => headers[k] = v);
      const r: GeminiModelRequest = {
        method: req.method,
        path: url.pathname,
        query: url.search,
        headers,
        model: m ? decodeURIComponent(m[1]) : "",
        api: m ? m[2] : "",
        body,
        raw,
        t,
      };
      requests.push(r);
      if (r.api === "countTokens") {
        const b = enc.encode(JSON.stringify({ totalTokens: raw.length >> 2 }));
        answers.push(b);
        return new Response(b, {
          headers: { "content-type": "application/json; charset=UTF-8" },
        });
      }
      const a = policy(r);
      if ("json" in a) {
        const b = enc.encode(JSON.stringify(a.json));
        answers.push(b);
        return new Response(b, {
          status: a.status ?? 200,
          headers: {
            "content-type": "application/json; charset=UTF-8",
            ...a.headers,
          },
        });
      }
      const events = a.chunks.map((c) =>
        enc.encode(`data: ${JSON.stringify(c)}\r\n\r\n`)
      );
      const cut = a.cutAfter ?? -1;
      answers.push(enc.encode(
        events.slice(0, cut < 0 ? events.length : cut).map((e) =>
          new TextDecoder().decode(e)
        ).join(""),
      ));
      let i = 0;
      const stream = new ReadableStream<Uint8Array>({
        pull(ctrl) {
          if (i === cut) {
            ctrl.error(new Error("cut by the scripted model"));
            return;
          }
          if (i < events.length) ctrl.enqueue(events[i++]);
          else ctrl.close();
        },
      });
      return new Response(stream, {
        headers: { "content-type": "text/event-stream" },
      });
    },
  );
  const addr = server.addr as Deno.NetAddr;
  return {
    url: `http://127.0.0.1:${addr.port}`,
    requests,
    answers,
    close: () => server.shutdown(),
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}
