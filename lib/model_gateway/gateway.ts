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
import type { TraceEvent } from "../trace/event.ts";
import { isValidId } from "../trace/ids.ts";
import { apiError, type ApiFamily, type GatewayAnswer } from "./api_errors.ts";
import { ConversationBook } from "./conversation_book.ts";
import {
  DEFAULT_UPSTREAM_ANTHROPIC,
  DEFAULT_UPSTREAM_OPENAI,
  DEFAULT_UPSTREAM_TIMEOUT_MS,
  type ModelGatewayContext,
  type ModelGatewayOptions,
  type ModelGatewayStats,
} from "./options.ts";
import { anthropicMessagesWire } from "./anthropic_wire.ts";
import { openaiChatWire } from "./openai_chat_wire.ts";
import { openaiResponsesWire } from "./openai_responses_wire.ts";
import { GATEWAY_SOURCE, type RefusedAttempt } from "./recorder.ts";
import {
  MAX_KEPT_STREAM_BYTES,
  type Pending,
  RecordQueue,
} from "./record_queue.ts";
import {
  concat,
  errorOf,
  headerText,
  readOwn,
  readUpstream,
  safeJson,
  streamOf,
} from "./exchange_bytes.ts";
import {
  isObject,
  type NormRequest,
  type Wire,
  type WireReader,
  WireShapeError,
} from "./wire_types.ts";
import { restoreBook } from "./restore.ts";
import type { ServedPackage, ServingDecision } from "./serving.ts";
import { WRITERS } from "./wire_writer_table.ts";

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

/**
 * Whether a path is one of the model API routes: everything under `/v1/`
 * but OTLP's `/v1/traces`, and under `/p/<package>/v1/` (a named package).
 */
export function isModelRoute(path: string): boolean {
  return (path.startsWith("/v1/") && path !== "/v1/traces") ||
    /^\/p\/[^/]+\/v1\//.test(path);
}

/**
 * The package a model route names and the API path under it.
 *
 * @param path `/v1/…` or `/p/<name>/v1/…`.
 * @returns The package name ("" for the plain `/v1/…`) and the API path.
 */
export function splitModelRoute(path: string): { name: string; api: string } {
  const m = /^\/p\/([^/]+)(\/v1\/.*)$/.exec(path);
  return m
    ? { name: decodeURIComponent(m[1]), api: m[2] }
    : { name: "", api: path };
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
  readonly #book = new ConversationBook();
  readonly #packages: Map<string, ServedPackage>;
  readonly #records: RecordQueue;
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
    this.#packages = new Map(Object.entries(options.packages ?? {}));
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
      ...(this.#packages.size
        ? {
          packages: Object.fromEntries(
            [...this.#packages].map(([n, p]) => [
              n === "" ? "/v1" : `/p/${n}/v1`,
              p.id,
            ]),
          ),
          served: 0,
          passed_through: 0,
          last_pass_through: null,
          refusals: 0,
          gave_up: 0,
        }
        : {}),
    };
    this.#records = new RecordQueue(ctx, {
      book: this.#book,
      stats: this.stats,
      max: options.maxRecordQueue ?? 1024,
    });
  }

  /** Resolves once every exchange answered so far is recorded (tests, shutdown). */
  settled(): Promise<void> {
    return this.#records.settled();
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
  async answer(req: GatewayRequest, fullPath: string): Promise<GatewayAnswer> {
    const stats = this.stats;
    stats.requests++;
    const started = new Date();
    stats.last_request_at = started.toISOString();
    const { name, api: path } = splitModelRoute(fullPath);
    const pkg = this.#packages.get(name) ?? null;
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
        return apiError(family, {
          status: 413,
          message:
            `The request body is larger than the gateway takes (${this.#ctx.maxBodyBytes} bytes; serve --max-body-bytes raises it): ${
              (err as Error).message
            }`,
        });
      }
    }
    if (name !== "" && pkg === null) {
      return apiError(family, {
        status: 404,
        message: `No package named ${
          JSON.stringify(name)
        } is served here (serve --package ${name}=FILE serves one)`,
      });
    }
    const headers = new Headers();
    if (req.headers) {
      for (const [k, v] of req.headers()) {
        if (!DROP_REQUEST.has(k)) headers.append(k, v);
      }
    }
    let skipped: string | null = null;
    if (pkg && route && body) {
      const served = await this.#withPackage({
        pkg,
        route,
        family,
        url,
        headers,
        body,
        req,
        started,
      });
      // A request the package does not fit goes the plain way, untouched.
      if ("skip" in served) skipped = served.skip;
      else return served;
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
    if (skipped !== null) {
      out["x-harness-package-skipped"] = headerText(skipped);
    }
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
      this.#records.enqueue(record);
    }
    return { status: res.status, headers: out, body: null, raw };
  }

  /**
   * A request under a package: answered by the package (its due lookups),
   * or forwarded with the state-changing tools narrowed and the model's
   * state-changing calls checked before the client sees them (a refused
   * answer is asked again with the refusal as the tool's answer, at most
   * twice, then answered in words). A request the package does not fit
   * comes back as `{skip: reason}`: it goes the plain way (streamed,
   * recorded), with the reason in `x-harness-package-skipped`.
   */
  async #withPackage(a: {
    pkg: ServedPackage;
    route: { wire: Wire; reader: WireReader };
    family: ApiFamily;
    url: string;
    headers: Headers;
    body: Uint8Array;
    req: GatewayRequest;
    started: Date;
  }): Promise<GatewayAnswer | { skip: string }> {
    const stats = this.stats;
    const { pkg, route } = a;
    let parsed: Record<string, unknown>;
    let request: NormRequest;
    let decision: ServingDecision;
    try {
      const v = JSON.parse(new TextDecoder().decode(a.body));
      if (!isObject(v)) throw new WireShapeError("the body is not an object");
      parsed = v;
      request = route.reader.request(parsed);
      decision = request.previous_response_id !== null
        ? {
          kind: "skip",
          reason:
            "previous_response_id keeps the conversation upstream: send the whole input to use the package",
        }
        : pkg.decide(request);
    } catch (err) {
      decision = {
        kind: "skip",
        reason: `the request cannot be read: ${(err as Error).message}`,
      };
      parsed = {};
      request = null as unknown as NormRequest;
    }
    if (decision.kind === "skip") {
      stats.passed_through = (stats.passed_through ?? 0) + 1;
      stats.last_pass_through = decision.reason.slice(0, 300);
      return { skip: decision.reason };
    }
    const writer = WRITERS[route.wire];
    const stream = request.stream;
    const usage = isObject(parsed.stream_options) &&
      parsed.stream_options.include_usage === true;
    const capture = a.req.header("x-harness-capture") ||
      this.#ctx.defaultCapture();
    const named = a.req.header("x-harness-episode");
    const base = {
      capture_id: capture,
      episode_id: named && isValidId(named) ? named : null,
      request,
      body: parsed,
      started: a.started,
    };
    if (decision.kind === "serve") {
      stats.served = (stats.served ?? 0) + 1;
      const own = writer.answer(
        { text: "", calls: decision.calls, model: request.model },
        { stream, usage },
      );
      const norm = readOwn(route.reader, { own, stream });
      this.#records.ready({
        ...base,
        status: 200,
        response: norm,
        duration_ms: Date.now() - a.started.getTime(),
        served_by: pkg.id,
      });
      return {
        status: 200,
        headers: {
          "content-type": own.contentType,
          "x-harness-served": "package",
          "x-harness-package": headerText(pkg.id),
        },
        body: null,
        raw: own.body,
      };
    }
    let sent = writer.withTools(parsed, decision.narrowing);
    const refused: RefusedAttempt[] = [];
    for (let attempt = 0; attempt <= MAX_REASKS; attempt++) {
      const got = await this.#forwardBuffered(a, sent);
      if ("answer" in got) {
        // The answers refused before are recorded all the same.
        if (refused.length > 0) {
          this.#records.ready({
            ...base,
            body: sent,
            status: got.answer.status,
            response: null,
            duration_ms: Date.now() - a.started.getTime(),
            refused_attempts: refused,
            error: {
              type: "upstream",
              message: "the upstream could not be reached while asking again",
            },
          });
        }
        return got.answer;
      }
      const { res, headers, bytes, chunks } = got;
      const norm = res.status >= 200 && res.status < 300
        ? readUpstream(route.reader, { bytes, chunks })
        : null;
      const refusals = norm ? pkg.check(request, norm.tool_calls) : [];
      if (!norm || refusals.length === 0) {
        this.#records.ready({
          ...base,
          body: sent,
          status: res.status,
          response: norm,
          duration_ms: Date.now() - a.started.getTime(),
          refused_attempts: refused,
          ...(norm ? {} : { error: errorOf(safeJson(bytes), res.status) }),
        });
        return {
          status: res.status,
          headers,
          body: null,
          ...(chunks ? { stream: streamOf(chunks) } : { raw: bytes }),
        };
      }
      stats.refusals = (stats.refusals ?? 0) + refusals.length;
      refused.push({ response: norm, refusals, status: res.status });
      sent = writer.withRefusals(sent, norm, refusals);
    }
    stats.gave_up = (stats.gave_up ?? 0) + 1;
    const reasons = [
      ...new Set(refused.flatMap((r) => r.refusals.map((x) => x.reason))),
    ];
    const own = writer.answer({
      text: `I cannot do that: ${reasons.join("; ")}.`,
      calls: [],
      model: request.model,
    }, { stream, usage });
    this.#records.ready({
      ...base,
      status: 200,
      response: readOwn(route.reader, { own, stream }),
      duration_ms: Date.now() - a.started.getTime(),
      served_by: pkg.id,
      refused_attempts: refused,
    });
    return {
      status: 200,
      headers: {
        "content-type": own.contentType,
        "x-harness-served": "package",
        "x-harness-refused": String(refused.length),
      },
      body: null,
      raw: own.body,
    };
  }

  /**
   * One upstream request, its answer read whole (a stream kept piece by
   * piece, so it is relayed as it came once checked).
   */
  async #forwardBuffered(
    a: {
      family: ApiFamily;
      url: string;
      headers: Headers;
      body: Uint8Array;
      req: GatewayRequest;
    },
    body: Record<string, unknown>,
  ): Promise<
    | { answer: GatewayAnswer }
    | {
      res: Response;
      headers: Record<string, string>;
      bytes: Uint8Array;
      chunks: Uint8Array[] | null;
    }
  > {
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    const signal = a.req.signal
      ? AbortSignal.any([a.req.signal, timeout])
      : timeout;
    try {
      const res = await fetch(a.url, {
        method: "POST",
        headers: a.headers,
        body: JSON.stringify(body),
        signal,
        redirect: "manual",
      });
      const headers: Record<string, string> = {};
      res.headers.forEach((v, k) => {
        if (!DROP_ANSWER.has(k)) headers[k] = v;
      });
      const isStream = (res.headers.get("content-type") ?? "").includes(
        "text/event-stream",
      );
      if (isStream && res.body) {
        this.stats.streams++;
        const chunks: Uint8Array[] = [];
        for await (const c of res.body) chunks.push(c);
        return { res, headers, bytes: concat(chunks), chunks };
      }
      return {
        res,
        headers,
        bytes: new Uint8Array(await res.arrayBuffer()),
        chunks: null,
      };
    } catch (err) {
      return {
        answer: this.#unreachable(a.family, a.url, err, a.req.signal, timeout),
      };
    }
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
      return apiError(family, { status: 502, message: "The client went away" });
    }
    this.stats.upstream_errors++;
    if (timeout.aborted) {
      return apiError(family, {
        status: 504,
        message:
          `The upstream ${origin} did not answer within ${this.#timeoutMs} ms (the gateway's upstream time-out)`,
      });
    }
    const reason = err instanceof Error ? err.message : String(err);
    return apiError(family, {
      status: 502,
      message: `The model gateway could not reach the upstream ${origin}: ${
        reason.replaceAll(url, origin)
      } (check serve --upstream-openai / --upstream-anthropic)`,
    });
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
      this.#records.enqueue(record);
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
}

/** Re-asks after a refused answer, at most. */
const MAX_REASKS = 2;
