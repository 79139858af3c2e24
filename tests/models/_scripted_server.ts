/**
 * A scripted HTTP server on 127.0.0.1 and a free port for the model
 * binding tests: it answers each request with the next scripted answer
 * and records what it got.
 *
 * @module
 */

/** One scripted answer. */
export interface ScriptedAnswer {
  /** HTTP status. @default {200} */
  status?: number;
  /** Extra headers. */
  headers?: Record<string, string>;
  /** A JSON body. */
  json?: unknown;
  /** A raw body (sent as is, with `content-type` from `headers` or JSON). */
  raw?: string;
  /** Never answer (until the server closes): for time-outs. */
  hang?: boolean;
}

/** A request the server got. */
export interface RecordedRequest {
  /** Method. */
  method: string;
  /** Path and query. */
  path: string;
  /** Headers, lower-case names. */
  headers: Record<string, string>;
  /** The body, parsed as JSON (null when it is not JSON). */
  body: Record<string, unknown> | null;
}

/** A running scripted server. */
export interface ScriptedServer {
  /** `http://127.0.0.1:<port>`. */
  origin: string;
  /** Requests in order. */
  requests: RecordedRequest[];
  /** Queue more answers. */
  push(...answers: ScriptedAnswer[]): void;
  /** Answers not used yet. */
  readonly pending: number;
  /** Stop (releases hung requests). */
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Start a scripted server. When its queue is empty it answers 599 with a
 * JSON error, so a test that sends one request too many sees it.
 *
 * @param answers The first answers.
 * @returns The server.
 */
export function startScriptedServer(
  answers: ScriptedAnswer[] = [],
): ScriptedServer {
  const queue = [...answers];
  const requests: RecordedRequest[] = [];
  const hung: (() => void)[] = [];
  const closing = new Promise<void>((resolve) => hung.push(resolve));
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (req) => {
      const text = await req.text();
      let body: Record<string, unknown> | null = null;
      try {
        body = JSON.parse(text);
      } catch {
        body = null;
      }
      const url = new URL(req.url);
      requests.push({
        method: req.method,
        path: url.pathname + url.search,
        headers: Object.fromEntries(req.headers),
        body,
      });
      const a = queue.shift() ??
        { status: 599, json: { error: { message: "no scripted answer" } } };
      if (a.hang) {
        await closing;
        return new Response(null, { status: 503 });
      }
      const headers = new Headers(a.headers);
      if (!headers.has("content-type")) {
        headers.set("content-type", "application/json");
      }
      return new Response(a.raw ?? JSON.stringify(a.json ?? {}), {
        status: a.status ?? 200,
        headers,
      });
    },
  );
  return {
    origin: `http://127.0.0.1:${server.addr.port}`,
    requests,
    push: (...more) => queue.push(...more),
    get pending() {
      return queue.length;
    },
    async [Symbol.asyncDispose]() {
      for (const r of hung) r();
      await server.shutdown();
    },
  };
}

/**
 * A loopback port nothing listens on (bound, then closed).
 *
 * @returns The port.
 */
export function closedPort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}
