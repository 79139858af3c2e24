/**
 * {@linkcode ModelGateway}: the model API routes of the ingest server.
 * Each request is forwarded to its upstream as it came (query string,
 * headers, body; the client's key goes to the upstream and nowhere else),
 * the answer relayed as it comes (a stream chunk by chunk), and the
 * exchange recorded after the answer is on its way, off the request's path:
 * a recording that fails never touches the answer, it is counted.
 *
 * A request on a recorded route is read once as it arrives
 * (`request_admission.ts`); it goes the plain way (`plain_answer.ts`:
 * forwarded, relayed, recorded) unless a package serves its route
 * (`package_serving.ts`).
 *
 * The routes are the wires' (`wires/registry.ts`: one spec per API, its
 * paths, readers, writer, error shape and upstream); a path no wire claims
 * goes to the OpenAI upstream, forwarded.
 *
 * @module
 */
import type { TraceEvent } from "../trace/event.ts";
import type { GatewayAnswer } from "./api_errors.ts";
import { GatewayError } from "./gateway_error.ts";
import { ANSWER_HEADERS } from "./answer_headers.ts";
import { ConversationBook } from "./conversation_book.ts";
import {
  DEFAULT_MAX_ANSWER_BYTES,
  DEFAULT_MAX_KEPT_BYTES,
  DEFAULT_UPSTREAM_TIMEOUT_MS,
  freshStats,
  type ModelGatewayContext,
  type ModelGatewayOptions,
  type ModelGatewayStats,
} from "./options.ts";
import {
  API_PREFIXES,
  UPSTREAMS,
  WIRE_SPECS,
  wireOf,
} from "./wires/registry.ts";
import type { HookJoin, WireSpec } from "./wires/wire_spec.ts";
import { GATEWAY_SOURCE } from "./recorder.ts";
import { RecordQueue } from "./record_queue.ts";
import { BookRestorer } from "./restore.ts";
import { KeptBytes } from "./kept_bytes.ts";
import { Http1Client } from "./http1_client/client.ts";
import { ActiveCaptureReading } from "./active_capture_reading.ts";
import type { ServedPackage } from "./serving.ts";
import type {
  GatewayRequest,
  RecordedRoute,
  RequestTicket,
} from "./gateway_request.ts";
import { answerWithPackage } from "./package_serving.ts";
import { answerPlain } from "./plain_answer.ts";
import { admitRequest } from "./request_admission.ts";
import { abandonForward, forwardUpstream } from "./upstream_forward.ts";
import { resolveApiPath, upstreamUrl } from "./upstream_url.ts";

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

export { splitModelRoute } from "./routes.ts";
import { splitModelRoute } from "./routes.ts";

function trimSlash(url: string): string {
  return url.replace(/\/+$/, "");
}

/** The model API routes over one store. */
export class ModelGateway {
  readonly #ctx: ModelGatewayContext;
  /** Each upstream's base URL, by name. */
  readonly #upstreams: Map<string, string>;
  /** The wires' joins of host hooks' episodes (Gemini CLI's), by wire. */
  readonly #joins: Map<WireSpec, HookJoin>;
  readonly #timeoutMs: number;
  /** The own client for loopback upstreams (null: `fetch` for all). */
  readonly #client: Http1Client | null;
  readonly #book: ConversationBook;
  readonly #packages: Map<string, ServedPackage>;
  readonly #records: RecordQueue;
  readonly #kept: KeptBytes;
  readonly #maxAnswer: number;
  /** The active capture, read about once per turn of the loop. */
  readonly #active: ActiveCaptureReading;
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
    this.#active = new ActiveCaptureReading(
      ctx.store.root,
      () => ctx.defaultCapture(),
    );
    this.#book = new ConversationBook({
      maxMessages: options.maxConversationMessages,
    });
    const given: Record<string, string | undefined> = {
      ...(options.upstreamOpenai ? { openai: options.upstreamOpenai } : {}),
      ...(options.upstreamAnthropic
        ? { anthropic: options.upstreamAnthropic }
        : {}),
      ...options.upstreams,
    };
    this.#upstreams = new Map(
      UPSTREAMS.map((u) => [u.name, trimSlash(given[u.name] ?? u.default)]),
    );
    this.#joins = new Map(
      WIRE_SPECS.flatMap((s) => s.hooks ? [[s, s.hooks()]] : []),
    );
    this.#timeoutMs = options.upstreamTimeoutMs ?? DEFAULT_UPSTREAM_TIMEOUT_MS;
    this.#client = options.ownClient === false ? null : new Http1Client();
    this.#packages = new Map(Object.entries(options.packages ?? {}));
    this.stats = {
      ...freshStats(
        Object.fromEntries(
          [...this.#upstreams].map(([n, url]) => [n, new URL(url).origin]),
        ),
      ),
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
    this.#kept = new KeptBytes(options.maxKeptBytes ?? DEFAULT_MAX_KEPT_BYTES);
    // Read live on /health.
    const kept = this.#kept;
    const book = this.#book;
    Object.defineProperties(this.stats, {
      kept_bytes: { get: () => kept.used, enumerable: true },
      kept_bytes_peak: { get: () => kept.peak, enumerable: true },
      conversation_messages: {
        get: () => book.sizes.messages,
        enumerable: true,
      },
    });
    this.stats.busy = null;
    this.#maxAnswer = options.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES;
    this.#records = new RecordQueue(ctx, {
      book: this.#book,
      stats: this.stats,
      max: options.maxRecordQueue ?? 64,
      budget: this.#kept,
      record: options.record !== false,
      delayMs: options.recordDelayMs,
      wholeBodies: options.wholeBodies === true,
    });
  }

  /** Resolves once every exchange answered so far is recorded (tests, shutdown). */
  settled(): Promise<void> {
    return this.#records.settled();
  }

  /**
   * Rebuild what the gateway remembers (conversations, pending calls,
   * episodes that hooks record) from the spools of open captures, and
   * record what a stopped process left in the spill (each exchange once:
   * one whose request is in its capture already was recorded before it
   * stopped).
   *
   * @returns Conversations restored.
   */
  async restore(): Promise<number> {
    const restorer = new BookRestorer(this.#book);
    const tapes = this.#records.leftOver();
    const found = await restorer.scan(
      this.#ctx.store,
      new Set(tapes.map((t) => t.request_event_id)),
    );
    await this.#records.recordLeftOver(
      tapes.filter((t) => !found.has(t.request_event_id)),
      (sealed) => {
        for (const ev of sealed) restorer.feed(ev);
      },
    );
    return restorer.finish();
  }

  /** Stop: close the upstream connections and the spill's file (after `settled`). */
  close(): void {
    this.#client?.close();
    this.#records.close();
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
      for (const j of this.#joins.values()) j.observe(ev);
    }
  }

  /**
   * Answer one model API request.
   *
   * @param req The request.
   * @param path Its path (no query).
   * @returns The upstream's answer as it came (its error answers too), or
   *   the package's own answer.
   * @throws {GatewayError} When the gateway answers itself (a path outside
   *   the API, a body too large, no such package, no answer from the
   *   upstream): `errorAnswer` words it in the API's shape.
   */
  async answer(req: GatewayRequest, fullPath: string): Promise<GatewayAnswer> {
    const stats = this.stats;
    stats.requests++;
    const started = new Date();
    stats.last_request_at = started.toISOString();
    const { name, api: asked } = splitModelRoute(fullPath);
    const pkg = this.#packages.get(name) ?? null;
    // Dot segments resolved here, so the route, the recording and the
    // upstream's path all read the same path; one that leaves /v1/ is refused.
    const path = resolveApiPath(asked, API_PREFIXES);
    const matched = wireOf(req.method, path ?? asked, (h) => req.header(h));
    const family = matched.spec;
    const route: RecordedRoute | undefined = path !== null &&
        matched.route.recorded
      ? {
        spec: family,
        wire: family.wire,
        reader: family.reader(matched.route),
      }
      : undefined;
    const q = req.target.indexOf("?");
    const query = q < 0 ? "" : req.target.slice(q);
    const up = family.upstream;
    const url = path === null || !path.startsWith(up.strip)
      ? null
      : upstreamUrl(
        this.#upstreams.get(up.name)!,
        path.slice(up.strip.length),
        query,
      );
    if (url === null || path === null) {
      throw new GatewayError(
        family,
        "path_outside_api",
        "The request's path leaves the API's base path (dot segments are resolved, and may not go above the API version's folder)",
      );
    }
    let body: Uint8Array | null = null;
    if (req.method !== "GET" && req.method !== "HEAD") {
      try {
        body = req.bytes
          ? await req.bytes(this.#ctx.maxBodyBytes)
          : new TextEncoder().encode(await req.text(this.#ctx.maxBodyBytes));
      } catch (err) {
        throw new GatewayError(
          family,
          "body_too_large",
          `The request body is larger than the gateway takes (${this.#ctx.maxBodyBytes} bytes; serve --max-body-bytes raises it): ${
            (err as Error).message
          }`,
          err,
        );
      }
    }
    if (name !== "" && pkg === null) {
      throw new GatewayError(
        family,
        "package_not_found",
        `No package named ${
          JSON.stringify(name)
        } is served here (serve --package ${name}=FILE serves one)`,
      );
    }
    const headers = new Headers();
    if (req.headers) {
      for (const [k, v] of req.headers()) {
        if (!DROP_REQUEST.has(k)) headers.append(k, v);
      }
    }
    // A request no package serves goes upstream first: what follows (its
    // reading, its capture, its episode) is done while the upstream works.
    const forward = () =>
      forwardUpstream(
        { url, method: req.method, headers, body, client: req.signal },
        { family, timeoutMs: this.#timeoutMs, stats, client: this.#client },
      );
    const early = pkg ? null : forward();
    // Read once on arrival (the capture by its arrival time), before the
    // answer is read: every answer names the request's episode.
    let admitted: RequestTicket | string | null;
    try {
      admitted = route && body
        ? await admitRequest(req, { route, body, started }, {
          records: this.#records,
          book: this.#book,
          stats,
          active: this.#active,
          joins: this.#joins,
        })
        : null;
    } catch (err) {
      if (early) abandonForward(early, err);
      throw err;
    }
    const ticket = typeof admitted === "string" ? null : admitted;
    // Every answer names the request's episode, an error thrown too.
    const stamp = <A extends { headers: Record<string, string> }>(a: A): A => {
      if (ticket) {
        a.headers[ANSWER_HEADERS.episode] = ticket.identity.episode_id;
      }
      return a;
    };
    let skipped: string | null = null;
    if (pkg && route && body) {
      const served = await answerWithPackage(
        {
          pkg,
          route,
          family,
          url,
          headers,
          body,
          req,
          started,
          ticket,
          ...(typeof admitted === "string" ? { unreadable: admitted } : {}),
        },
        {
          ctx: this.#ctx,
          stats,
          records: this.#records,
          timeoutMs: this.#timeoutMs,
          client: this.#client,
          maxAnswerBytes: this.#maxAnswer,
          kept: this.#kept,
        },
      ).catch((err) => {
        throw err instanceof GatewayError ? stamp(err) : err;
      });
      // A request the package does not fit goes the plain way, untouched.
      if ("skip" in served) skipped = served.skip;
      else return stamp(served);
    }
    try {
      return stamp(
        await answerPlain(
          {
            req,
            family,
            route,
            started,
            ticket,
            sent: early ?? forward(),
            passedThrough: skipped !== null && pkg
              ? { id: pkg.id, reason: skipped }
              : null,
          },
          {
            stats,
            book: this.#book,
            records: this.#records,
            kept: this.#kept,
            maxAnswerBytes: this.#maxAnswer,
          },
        ),
      );
    } catch (err) {
      throw err instanceof GatewayError ? stamp(err) : err;
    }
  }
}
