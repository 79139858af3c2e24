/**
 * A scripted model upstream on 127.0.0.1 and a free port for the model
 * gateway tests. It speaks OpenAI Chat Completions, OpenAI Responses and
 * Anthropic Messages (whole and streamed), count_tokens and the model lists,
 * answering from a queue of {@linkcode UpstreamAnswer}s (plain data; the
 * bytes come from `_upstream_wires.ts`), and records every request with the
 * exact bytes it answered.
 *
 * It is its own small HTTP/1.1 server on `Deno.listen` (keep-alive,
 * `Content-Length` or chunked request bodies) rather than `Deno.serve`, so a
 * cut stream is a closed socket with nothing printed, a streamed answer is
 * one HTTP chunk per event, and a hung request holds nothing but its socket.
 *
 * @example
 * ```ts
 * import OpenAI from "openai";
 * import { startUpstreams } from "./_upstreams.ts";
 *
 * await using up = startUpstreams();
 * up.push({ text: "Hi", toolCalls: [{ name: "f", arguments: { a: 1 } }] });
 * const client = new OpenAI({ baseURL: up.openaiBase, apiKey: "k" });
 * const c = await client.chat.completions.create({
 *   model: "m",
 *   messages: [{ role: "user", content: "Hello" }],
 * });
 * if (c.choices[0].message.content !== "Hi") throw new Error("not the script");
 * ```
 *
 * @module
 */
import { renderAnswer, routeOf } from "./_upstream_wires.ts";
import type {
  RenderedAnswer,
  UpstreamAnswer,
  UpstreamRoute,
} from "./_upstream_answer.ts";
import {
  closeQuietly,
  concat,
  ConnReader,
  CRLF,
  writeAll,
} from "./_raw_http.ts";

export {
  parseSse,
  renderAnswer,
  routeOf,
  type SseEvent,
} from "./_upstream_wires.ts";
export {
  pieces,
  type RenderedAnswer,
  type UpstreamAnswer,
  type UpstreamError,
  type UpstreamRoute,
  type UpstreamToolCall,
  type UpstreamUsage,
} from "./_upstream_answer.ts";

/** How an exchange ended. */
export type ExchangeEnd =
  | "complete"
  | "cut"
  | "client_gone"
  | "closed";

/** One request the upstream got, and what it answered. */
export interface UpstreamExchange {
  /** 1-based number (ids in the answer carry it). */
  n: number;
  /** HTTP method. */
  method: string;
  /** Path with the query string, as received. */
  path: string;
  /** Headers, lower-case names (repeated ones joined with `, `). */
  headers: Record<string, string>;
  /** The raw body text. */
  body: string;
  /** The body parsed as JSON (null when it is not JSON). */
  json: Record<string, unknown> | null;
  /** The route, or null when the upstream does not speak the path. */
  route: UpstreamRoute | null;
  /** The scripted answer used (null for an unknown route). */
  answer: UpstreamAnswer | null;
  /** What the answer renders to (null while it hangs). */
  response: RenderedAnswer | null;
  /** Chunks actually written, in order (a cut body holds its first half). */
  sent: string[];
  /** Settles when the upstream is done with the exchange. */
  ended: Promise<ExchangeEnd>;
}

/**
 * Answers a generation request the queue holds no answer for, from the
 * request itself (a model that reads its input), or null for the default.
 */
export type Responder = (
  request: {
    route: UpstreamRoute;
    json: Record<string, unknown> | null;
    n: number;
  },
) => UpstreamAnswer | null;

/** A running scripted upstream. */
export interface Upstreams {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** OpenAI base URL (`url` + `/v1`). */
  openaiBase: string;
  /** Anthropic base URL (`url`, the SDK adds `/v1`). */
  anthropicBase: string;
  /** Every request, in arrival order. */
  requests: UpstreamExchange[];
  /** Queue answers. */
  push(...answers: UpstreamAnswer[]): void;
  /** Answers not used yet. */
  readonly pending: number;
  /**
   * Wait until this many requests have arrived.
   *
   * @param count Requests.
   * @returns The requests.
   */
  received(count: number): Promise<UpstreamExchange[]>;
  /** Stop: close the listener and every connection (releases hung ones). */
  close(): Promise<void>;
  /** Same as `close()`. */
  [Symbol.asyncDispose](): Promise<void>;
}

const GENERATION: ReadonlySet<UpstreamRoute> = new Set([
  "chat",
  "responses",
  "messages",
]);
const REASONS: Record<number, string> = {
  200: "OK",
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  429: "Too Many Requests",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
  529: "Overloaded",
};
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Start the upstream on 127.0.0.1 and a free port.
 *
 * When no queued answer fits a chat, responses or messages request it answers
 * 400 `No scripted answer …` in the API's shape; count_tokens and models
 * requests get a default answer.
 *
 * @param answers The first answers.
 * @returns The running upstream; dispose it to stop.
 */
export function startUpstreams(
  answers: UpstreamAnswer[] = [],
  options: { respond?: Responder } = {},
): Upstreams {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const server = new UpstreamServer(listener, answers, options.respond);
  const url = `http://127.0.0.1:${listener.addr.port}`;
  return {
    url,
    openaiBase: `${url}/v1`,
    anthropicBase: url,
    requests: server.requests,
    push: (...more) => server.queue.push(...more),
    get pending() {
      return server.queue.length;
    },
    received: (count) => server.received(count),
    close: () => server.close(),
    [Symbol.asyncDispose]: () => server.close(),
  };
}

/** One response a tapped client got. */
export interface TappedResponse {
  /** The request URL. */
  url: string;
  /** The request body when the client sent text (SDKs send JSON text). */
  request: string | null;
  /** HTTP status. */
  status: number;
  /** Response headers. */
  headers: Headers;
  /** The whole body text as the client received it, or the read error. */
  body: Promise<string | Error>;
}

/**
 * A `fetch` for an SDK's `fetch` option that keeps a copy of every response
 * the client gets (its body read in full beside the client), so a test can
 * compare the exact bytes with what the upstream sent.
 *
 * @returns The fetch and the responses, in order.
 */
export function tapFetch(): {
  fetch: typeof fetch;
  responses: TappedResponse[];
} {
  const responses: TappedResponse[] = [];
  const tapped = async (
    input: string | URL | Request,
    init?: RequestInit,
  ): Promise<Response> => {
    const res = await fetch(input, init);
    const copy = res.clone();
    responses.push({
      url: input instanceof Request ? input.url : String(input),
      request: typeof init?.body === "string" ? init.body : null,
      status: res.status,
      headers: res.headers,
      body: copy.text().catch((e: Error) => e),
    });
    return res;
  };
  return { fetch: tapped, responses };
}

class UpstreamServer {
  readonly requests: UpstreamExchange[] = [];
  readonly queue: UpstreamAnswer[];
  readonly #listener: Deno.TcpListener;
  readonly #conns = new Map<Deno.Conn, Promise<void>>();
  readonly #stop = new AbortController();
  readonly #accepting: Promise<void>;
  readonly #waiters: { count: number; resolve: () => void }[] = [];
  #closed: Promise<void> | null = null;

  readonly #respond: Responder | undefined;

  constructor(
    listener: Deno.TcpListener,
    answers: UpstreamAnswer[],
    respond?: Responder,
  ) {
    this.#listener = listener;
    this.#respond = respond;
    this.queue = [...answers];
    this.#accepting = this.#accept();
  }

  received(count: number): Promise<UpstreamExchange[]> {
    if (this.requests.length >= count) return Promise.resolve(this.requests);
    return new Promise((resolve) =>
      this.#waiters.push({ count, resolve: () => resolve(this.requests) })
    );
  }

  close(): Promise<void> {
    this.#closed ??= (async () => {
      this.#stop.abort();
      try {
        this.#listener.close();
      } catch { /* already closed */ }
      await this.#accepting;
      for (const conn of this.#conns.keys()) closeQuietly(conn);
      await Promise.all(this.#conns.values());
    })();
    return this.#closed;
  }

  async #accept(): Promise<void> {
    try {
      for await (const conn of this.#listener) {
        if (this.#stop.signal.aborted) {
          closeQuietly(conn);
          break;
        }
        const done = this.#serve(conn).finally(() => this.#conns.delete(conn));
        this.#conns.set(conn, done);
      }
    } catch { /* the listener was closed */ }
  }

  async #serve(conn: Deno.Conn): Promise<void> {
    const reader = new ConnReader(conn);
    try {
      while (!this.#stop.signal.aborted) {
        const head = await reader.head();
        if (head === null) return;
        const keepAlive = await this.#exchange(conn, reader, head);
        if (!keepAlive) return;
      }
    } catch {
      /* a connection error ends the connection */
    } finally {
      closeQuietly(conn);
      await reader.settle();
    }
  }

  async #exchange(
    conn: Deno.Conn,
    reader: ConnReader,
    head: string,
  ): Promise<boolean> {
    const [requestLine, ...lines] = head.split("\r\n");
    const [method, target] = requestLine.split(" ");
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const at = line.indexOf(":");
      const name = line.slice(0, at).trim().toLowerCase();
      const value = line.slice(at + 1).trim();
      headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
    }
    const bytes = /chunked/i.test(headers["transfer-encoding"] ?? "")
      ? await reader.chunked()
      : await reader.exact(Number(headers["content-length"] ?? 0));
    const body = decoder.decode(bytes);
    let json: Record<string, unknown> | null = null;
    try {
      json = JSON.parse(body);
    } catch { /* not JSON */ }
    const pathname = new URL(target, "http://upstream").pathname;
    const route = routeOf(method, pathname);
    const answer = route
      ? this.#take(route, method, pathname, {
        json,
        n: this.requests.length + 1,
      })
      : null;
    let end!: (e: ExchangeEnd) => void;
    const exchange: UpstreamExchange = {
      n: this.requests.length + 1,
      method,
      path: target,
      headers,
      body,
      json,
      route,
      answer,
      response: null,
      sent: [],
      ended: new Promise((resolve) => end = resolve),
    };
    this.requests.push(exchange);
    for (const w of this.#waiters.filter((w) => w.count <= exchange.n)) {
      this.#waiters.splice(this.#waiters.indexOf(w), 1);
      w.resolve();
    }
    if (answer?.hang) {
      await this.#idle(reader);
      end(this.#stop.signal.aborted ? "closed" : "client_gone");
      return false;
    }
    exchange.response = renderAnswer(
      answer ?? { status: 404, error: `No route for ${method} ${pathname}` },
      {
        route: route ?? "chat",
        n: exchange.n,
        request: json,
        anthropic: "anthropic-version" in headers,
      },
    );
    const how = await this.#write(conn, reader, exchange);
    end(how);
    return how === "complete" && !/close/i.test(headers.connection ?? "");
  }

  #take(
    route: UpstreamRoute,
    method: string,
    path: string,
    req: { json: Record<string, unknown> | null; n: number },
  ): UpstreamAnswer {
    const i = this.queue.findIndex((a) =>
      a.route === route || (a.route === undefined && GENERATION.has(route))
    );
    if (i >= 0) return this.queue.splice(i, 1)[0];
    if (!GENERATION.has(route)) return {};
    const own = this.#respond?.({ route, ...req });
    if (own) return own;
    return { status: 400, error: `No scripted answer for ${method} ${path}` };
  }

  async #write(
    conn: Deno.Conn,
    reader: ConnReader,
    exchange: UpstreamExchange,
  ): Promise<ExchangeEnd> {
    const r = exchange.response!;
    const a = exchange.answer ?? {};
    const framing: Record<string, string> = r.stream
      ? { "transfer-encoding": "chunked" }
      : { "content-length": String(encoder.encode(r.body).length) };
    const head = [
      `HTTP/1.1 ${r.status} ${REASONS[r.status] ?? "Status"}`,
      ...Object.entries({ ...r.headers, ...framing }).map(([k, v]) =>
        `${k}: ${v}`
      ),
      "connection: keep-alive",
    ].join("\r\n") + "\r\n\r\n";
    try {
      await writeAll(conn, encoder.encode(head));
      if (!r.stream) {
        if (a.cutAfterChunks !== undefined) {
          const half = r.body.slice(0, Math.floor(r.body.length / 2));
          await writeAll(conn, encoder.encode(half));
          exchange.sent.push(half);
          return "cut";
        }
        await writeAll(conn, encoder.encode(r.body));
        exchange.sent.push(r.body);
        return "complete";
      }
      for (const [i, chunk] of r.chunks.entries()) {
        if (i > 0 && a.chunkDelayMs) await this.#sleep(a.chunkDelayMs);
        if (this.#stop.signal.aborted) return "closed";
        if (i === a.cutAfterChunks) return "cut";
        if (i === a.stallAfterChunks) {
          await this.#idle(reader);
          return this.#stop.signal.aborted ? "closed" : "client_gone";
        }
        const data = encoder.encode(chunk);
        await writeAll(
          conn,
          concat(encoder.encode(`${data.length.toString(16)}\r\n`), data, CRLF),
        );
        exchange.sent.push(chunk);
      }
      if (a.cutAfterChunks !== undefined) return "cut";
      await writeAll(conn, encoder.encode("0\r\n\r\n"));
      return "complete";
    } catch {
      return this.#stop.signal.aborted ? "closed" : "client_gone";
    }
  }

  /** Wait until the client goes away or the upstream closes. */
  async #idle(reader: ConnReader): Promise<void> {
    const stopped = new Promise<void>((resolve) => {
      if (this.#stop.signal.aborted) resolve();
      this.#stop.signal.addEventListener("abort", () => resolve(), {
        once: true,
      });
    });
    await Promise.race([reader.eof(), stopped]);
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const signal = this.#stop.signal;
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener("abort", done, { once: true });
    });
  }
}
