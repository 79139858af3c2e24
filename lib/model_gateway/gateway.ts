/**
 * {@linkcode ModelGateway}: the model API routes of the ingest server.
 * Each request is forwarded to its upstream as it came (query string,
 * headers, body; the client's key goes to the upstream and nowhere else),
 * the answer relayed as it comes (a stream chunk by chunk), and the
 * exchange recorded after the answer is on its way, off the request's path:
 * a recording that fails never touches the answer, it is counted.
 *
 * | route | upstream | recorded |
 * | --- | --- | --- |
 * | `POST /v1/chat/completions` | OpenAI | yes |
 * | `POST /v1/responses` | OpenAI | yes |
 * | `POST /v1/messages` | Anthropic | yes |
 * | `POST /v1/messages/count_tokens` | Anthropic | no |
 * | `GET /v1/models`, any other `/v1/…` | Anthropic when `anthropic-version` or `x-api-key` is sent, else OpenAI | no |
 *
 * @module
 */
import type { HarnessStore } from "../store/store.ts";
import type { TraceEvent, UnsealedEvent } from "../trace/event.ts";
import { isValidId } from "../trace/ids.ts";
import { apiError, type ApiFamily, type GatewayAnswer } from "./api_errors.ts";
import { ConversationBook } from "./conversation_book.ts";
import {
  DEFAULT_UPSTREAM_ANTHROPIC,
  DEFAULT_UPSTREAM_OPENAI,
  DEFAULT_UPSTREAM_TIMEOUT_MS,
  type ModelGatewayOptions,
  type ModelGatewayStats,
} from "./options.ts";
import { anthropicMessagesWire } from "./anthropic_wire.ts";
import { openaiChatWire } from "./openai_chat_wire.ts";
import { openaiResponsesWire } from "./openai_responses_wire.ts";
import { type Exchange, exchangeEvents, GATEWAY_SOURCE } from "./recorder.ts";
import { SseParser } from "./sse.ts";
import { isObject, type Wire, type WireReader } from "./wire_types.ts";
import { restoreBook } from "./restore.ts";

/** A request, as the gateway reads it (the ingest server's request). */
export interface GatewayRequest {
  /** Method. */
  readonly method: string;
  /** Path and query. */
  readonly target: string;
  /** One header. */
  header(name: string): string | null;
  /** Every header. */
  headers?(): Iterable<[string, string]>;
  /** The body's bytes. */
  bytes?(limit: number): Promise<Uint8Array>;
  /** The body as text. */
  text(limit: number): Promise<string>;
  /** Aborted when the client goes away. */
  readonly signal?: AbortSignal;
}

/** What the gateway needs of the server. */
export interface ModelGatewayContext {
  /** The store it records into. */
  store: HarnessStore;
  /** The capture when the request names none (active, else default). */
  defaultCapture: () => string;
  /** Largest request body. */
  maxBodyBytes: number;
  /** Redaction applied to every event before it is sealed. */
  redact: (events: UnsealedEvent[]) => UnsealedEvent[];
}

const WIRES: Record<string, { wire: Wire; reader: WireReader }> = {
  "/v1/chat/completions": { wire: "openai_chat", reader: openaiChatWire },
  "/v1/responses": { wire: "openai_responses", reader: openaiResponsesWire },
  "/v1/messages": { wire: "anthropic_messages", reader: anthropicMessagesWire },
};

/** Request headers never passed on (hop by hop, ours, the encoding we negotiate). */
const DROP_REQUEST = new Set([
  "host",
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "content-length",
  "accept-encoding",
  "expect",
  "x-harness-capture",
  "x-harness-episode",
  "x-harness-token",
]);

/** Answer headers the server writes itself (or that no longer hold). */
const DROP_ANSWER = new Set([
  "connection",
  "keep-alive",
  "transfer-encoding",
  "content-length",
  "content-encoding",
  "date",
]);

/** Whether a path is one of the model API routes (everything under `/v1/` but OTLP's `/v1/traces`). */
export function isModelRoute(path: string): boolean {
  return path.startsWith("/v1/") && path !== "/v1/traces";
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, "");
}

/** The model API routes over one store. */
export class ModelGateway {
  readonly #ctx: ModelGatewayContext;
  readonly #openai: string;
  readonly #anthropic: string;
  readonly #timeoutMs: number;
  readonly #maxQueue: number;
  readonly #book = new ConversationBook();
  readonly #queue: Pending[] = [];
  #draining = false;
  /** Counters (shown on `/health`). */
  readonly stats: ModelGatewayStats;

  /**
   * Create a `ModelGateway`.
   *
   * @param ctx Store, capture choice, limits, redaction.
   * @param options Upstreams and time-out.
   */
  constructor(ctx: ModelGatewayContext, options: ModelGatewayOptions = {}) {
    this.#ctx = ctx;
    this.#openai = trimSlash(options.upstreamOpenai ?? DEFAULT_UPSTREAM_OPENAI);
    this.#anthropic = trimSlash(
      options.upstreamAnthropic ?? DEFAULT_UPSTREAM_ANTHROPIC,
    );
    this.#timeoutMs = options.upstreamTimeoutMs ?? DEFAULT_UPSTREAM_TIMEOUT_MS;
    this.#maxQueue = options.maxRecordQueue ?? 1024;
    this.stats = {
      requests: 0,
      streams: 0,
      recorded: 0,
      record_misses: 0,
      last_miss: null,
      upstream_errors: 0,
      client_aborts: 0,
      queued: 0,
      pending_calls: 0,
      last_request_at: null,
      upstreams: {
        openai: new URL(this.#openai).origin,
        anthropic: new URL(this.#anthropic).origin,
      },
    };
  }

  /**
   * Rebuild what the gateway remembers (conversations, pending calls,
   * episodes that hooks record) from the spools of open captures.
   *
   * @returns Conversations restored.
   */
  async restore(): Promise<number> {
    return await restoreBook(this.#ctx.store, this.#book);
  }

  /**
   * Learn of an event stored by another route: an episode that host hooks
   * record gets the model's side only from the gateway.
   *
   * @param ev A sealed event.
   */
  observe(ev: TraceEvent): void {
    if (
      ev.source.host !== GATEWAY_SOURCE && ev.source.host.startsWith("host_")
    ) {
      this.#book.noteHookEpisode(ev.capture_id, ev.episode_id);
    }
  }

  /**
   * Answer one model API request.
   *
   * @param req The request.
   * @param path Its path (no query).
   * @returns The upstream's answer as it came, or the API's own error.
   */
  async answer(req: GatewayRequest, path: string): Promise<GatewayAnswer> {
    const stats = this.stats;
    stats.requests++;
    const started = new Date();
    stats.last_request_at = started.toISOString();
    const route = req.method === "POST" ? WIRES[path] : undefined;
    const family: ApiFamily = route
      ? (route.wire === "anthropic_messages" ? "anthropic" : "openai")
      : path.startsWith("/v1/messages") ||
          req.header("anthropic-version") !== null ||
          req.header("x-api-key") !== null
      ? "anthropic"
      : "openai";
    const q = req.target.indexOf("?");
    const query = q < 0 ? "" : req.target.slice(q);
    const url = family === "anthropic"
      ? `${this.#anthropic}${path}${query}`
      : `${this.#openai}${path.slice(3)}${query}`;
    let body: Uint8Array | null = null;
    if (req.method !== "GET" && req.method !== "HEAD") {
      try {
        body = req.bytes
          ? await req.bytes(this.#ctx.maxBodyBytes)
          : new TextEncoder().encode(await req.text(this.#ctx.maxBodyBytes));
      } catch (err) {
        return apiError(
          family,
          413,
          `The request body is larger than the gateway takes (${this.#ctx.maxBodyBytes} bytes; serve --max-body-bytes raises it): ${
            (err as Error).message
          }`,
        );
      }
    }
    const headers = new Headers();
    if (req.headers) {
      for (const [k, v] of req.headers()) {
        if (!DROP_REQUEST.has(k)) headers.append(k, v);
      }
    }
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    const signal = req.signal
      ? AbortSignal.any([req.signal, timeout])
      : timeout;
    let res: Response;
    try {
      res = await fetch(url, {
        method: req.method,
        headers,
        body: body && body.length > 0 ? body as Uint8Array<ArrayBuffer> : null,
        signal,
        redirect: "manual",
      });
    } catch (err) {
      return this.#unreachable(family, url, err, req.signal, timeout);
    }
    const out: Record<string, string> = {};
    res.headers.forEach((v, k) => {
      if (!DROP_ANSWER.has(k)) out[k] = v;
    });
    const record: Pending | null = route && body
      ? {
        reader: route.reader,
        wire: route.wire,
        capture: req.header("x-harness-capture"),
        episode: req.header("x-harness-episode"),
        body,
        started,
        status: res.status,
        answer: null,
        chunks: [],
        failure: null,
      }
      : null;
    const isStream = (res.headers.get("content-type") ?? "").includes(
      "text/event-stream",
    );
    if (isStream && res.body) {
      stats.streams++;
      return {
        status: res.status,
        headers: out,
        body: null,
        stream: this.#relay(res.body, record, req.signal),
      };
    }
    let raw: Uint8Array;
    try {
      raw = new Uint8Array(await res.arrayBuffer());
    } catch (err) {
      return this.#unreachable(family, url, err, req.signal, timeout);
    }
    if (record) {
      record.answer = raw;
      this.#enqueue(record);
    }
    return { status: res.status, headers: out, body: null, raw };
  }

  /** 502 (unreachable) or 504 (too slow), in the API's shape. */
  #unreachable(
    family: ApiFamily,
    url: string,
    err: unknown,
    client: AbortSignal | undefined,
    timeout: AbortSignal,
  ): GatewayAnswer {
    const origin = new URL(url).origin;
    if (client?.aborted) {
      this.stats.client_aborts++;
      return apiError(family, 502, "The client went away");
    }
    this.stats.upstream_errors++;
    if (timeout.aborted) {
      return apiError(
        family,
        504,
        `The upstream ${origin} did not answer within ${this.#timeoutMs} ms (the gateway's upstream time-out)`,
      );
    }
    const reason = err instanceof Error ? err.message : String(err);
    return apiError(
      family,
      502,
      `The model gateway could not reach the upstream ${origin}: ${
        reason.replaceAll(url, origin)
      } (check serve --upstream-openai / --upstream-anthropic)`,
    );
  }

  /**
   * Relay a stream piece by piece; its pieces are kept for the record
   * (read after the answer is complete, off the relay's path).
   */
  #relay(
    upstream: ReadableStream<Uint8Array>,
    record: Pending | null,
    client: AbortSignal | undefined,
  ): ReadableStream<Uint8Array> {
    const pieces = upstream.getReader();
    let kept = 0;
    let done = false;
    const end = (failure: string | null) => {
      if (done) return;
      done = true;
      if (!record) return;
      record.failure = failure;
      this.#enqueue(record);
    };
    return new ReadableStream<Uint8Array>({
      pull: async (ctrl) => {
        try {
          const { done: over, value } = await pieces.read();
          if (over) {
            end(null);
            ctrl.close();
            return;
          }
          if (record && kept < MAX_KEPT_STREAM_BYTES) {
            record.chunks.push(value);
            kept += value.length;
          }
          ctrl.enqueue(value);
        } catch (err) {
          if (client?.aborted) this.stats.client_aborts++;
          end(
            client?.aborted
              ? "the client went away"
              : `the upstream stream failed: ${(err as Error).message}`,
          );
          ctrl.error(err);
        }
      },
      cancel: async (reason) => {
        this.stats.client_aborts++;
        end("the client went away");
        await pieces.cancel(reason).catch(() => {});
      },
    }, { highWaterMark: 0 });
  }

  /**
   * Read a pending exchange: request, capture, answer. Null (and a miss
   * counted) when the request cannot be read: it was forwarded all the
   * same.
   */
  #read(p: Pending, defaultCapture: () => string): Exchange | null {
    let parsed: unknown;
    try {
      parsed = JSON.parse(new TextDecoder().decode(p.body));
    } catch (err) {
      this.#miss(`unreadable request: ${(err as Error).message}`);
      return null;
    }
    const capture = p.capture || defaultCapture();
    if (!isValidId(capture)) {
      this.#miss(
        `capture id ${
          JSON.stringify(String(capture).slice(0, 80))
        } is not valid`,
      );
      return null;
    }
    let request;
    try {
      request = p.reader.request(parsed);
    } catch (err) {
      this.#miss(`not the API's request shape: ${(err as Error).message}`);
      return null;
    }
    const ex: Exchange = {
      capture_id: capture,
      episode_id: p.episode && isValidId(p.episode) ? p.episode : null,
      request,
      body: parsed,
      started: p.started,
      status: p.status,
      response: null,
      duration_ms: (p.finished ?? Date.now()) - p.started.getTime(),
    };
    const ok = p.status >= 200 && p.status < 300;
    if (p.answer) {
      let json: unknown = null;
      try {
        json = JSON.parse(new TextDecoder().decode(p.answer));
      } catch {
        // Not JSON: recorded as an error below.
      }
      if (!ok) ex.error = errorOf(json, p.status);
      else {
        try {
          ex.response = p.reader.response(json);
        } catch (err) {
          ex.error = { type: "unreadable", message: (err as Error).message };
        }
      }
      return ex;
    }
    const acc = p.reader.streamReader();
    const parser = new SseParser((e, d) => acc.add(e, d));
    for (const c of p.chunks) parser.push(c);
    parser.end();
    if (ok) {
      ex.response = acc.result();
      if (!acc.complete) ex.incomplete = true;
    }
    if (p.failure || !ok) {
      ex.error = { type: "stream", message: p.failure ?? `status ${p.status}` };
    }
    return ex;
  }

  #miss(reason: string): void {
    this.stats.record_misses++;
    this.stats.last_miss = reason.slice(0, 300);
  }

  #enqueue(ex: Pending): void {
    ex.finished = Date.now();
    if (this.#queue.length >= this.#maxQueue) {
      this.#miss(`the recording queue is full (${this.#maxQueue} exchanges)`);
      return;
    }
    this.#queue.push(ex);
    this.stats.queued = this.#queue.length;
    if (!this.#draining) {
      this.#draining = true;
      // After the answer's bytes are handed to the connection.
      setTimeout(() => this.#drain(), 0);
    }
  }

  #drain(): void {
    // The active capture is read once per round, not per exchange.
    let active: string | null = null;
    const defaultCapture = () => active ??= this.#ctx.defaultCapture();
    try {
      for (let p = this.#queue.shift(); p; p = this.#queue.shift()) {
        this.stats.queued = this.#queue.length;
        try {
          const ex = this.#read(p, defaultCapture);
          if (ex === null) continue;
          const events = this.#ctx.redact(
            exchangeEvents(ex, { book: this.#book }),
          );
          if (events.length > 0) {
            this.#ctx.store.sink(ex.capture_id).emitMany(events);
          }
          this.stats.recorded++;
        } catch (err) {
          this.#miss(`recording failed: ${(err as Error).message}`);
        }
      }
    } finally {
      this.#draining = false;
      this.stats.queued = this.#queue.length;
      this.stats.pending_calls = this.#book.sizes.pending_calls;
    }
  }

  /** Resolves once every exchange answered so far is recorded (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.#queue.length > 0 || this.#draining) {
      await new Promise((r) => setTimeout(r, 1));
    }
  }
}

/** An exchange answered, waiting to be read and recorded. */
interface Pending {
  /** The wire's reader. */
  reader: WireReader;
  /** The wire. */
  wire: Wire;
  /** `x-harness-capture`, if sent. */
  capture: string | null;
  /** `x-harness-episode`, if sent. */
  episode: string | null;
  /** The request body as it came. */
  body: Uint8Array;
  /** When the request arrived. */
  started: Date;
  /** When the answer was complete (ms since the epoch). */
  finished?: number;
  /** The upstream's status. */
  status: number;
  /** A whole answer's bytes (null for a stream). */
  answer: Uint8Array | null;
  /** A stream's pieces, as relayed. */
  chunks: Uint8Array[];
  /** Why a stream ended early, or null. */
  failure: string | null;
}

/** Most bytes of a streamed answer kept for its record. */
const MAX_KEPT_STREAM_BYTES = 32 * 1024 * 1024;

/** The error an upstream answered, in a few words. */
function errorOf(
  json: unknown,
  status: number,
): { type: string; message: string } {
  const e = isObject(json) && isObject(json.error) ? json.error : null;
  return {
    type: e && typeof e.type === "string" ? e.type : `http_${status}`,
    message: e && typeof e.message === "string"
      ? e.message.slice(0, 2000)
      : `the upstream answered ${status}`,
  };
}
