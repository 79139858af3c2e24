/**
 * {@linkcode IngestServer}: the loopback HTTP listener over
 * {@linkcode createIngestHandler}. Not exported from `mod.ts` (it listens on
 * the network); the `./ingest` subpath exports it, and `ingest.ts serve` runs
 * it (through `lib/cli/cmd_serve.ts`).
 *
 * @module
 */
import { ToolCallCorrelator } from "../adapters/correlator.ts";
import { SessionMemory } from "../adapters/session_memory.ts";
import { restoreHookState } from "./resume.ts";
import { errorAnswer } from "./error_answer.ts";
import { Http1Server } from "./http1/mod.ts";
import { DEFAULT_MAX_BODY_BYTES } from "./body.ts";
import type { HarnessStore } from "../store/store.ts";
import { createIngestHandler, errorShapeOf } from "./handler.ts";
import type { IngestHandlerOptions, IngestStats } from "./handler_types.ts";
import { activeCaptureReader } from "../store/active_capture.ts";
import type { ModelGateway } from "../model_gateway/gateway.ts";

/** Default ingest port. */
export const DEFAULT_PORT = 8848;
/** Default ingest host. */
export const DEFAULT_HOST = "127.0.0.1";

/** Options of {@linkcode IngestServer}. */
export interface IngestServerOptions extends IngestHandlerOptions {
  /**
   * Address to bind.
   * @default "127.0.0.1"
   */
  host?: string;
  /**
   * Port to bind (0 picks a free one).
   * @default 8848
   */
  port?: number;
  /**
   * Allow a non-loopback address; then `token` is required.
   * @default false
   */
  allowRemote?: boolean;
  /**
   * Connections open at once; at the cap the longest-idle one is closed
   * for a new one, or the new one is answered 503.
   * @default 1024
   */
  maxConnections?: number;
  /**
   * Idle connections are closed after this many milliseconds.
   * @default 15000
   */
  idleTimeoutMs?: number;
  /**
   * A request head must arrive within this many milliseconds of its first
   * byte.
   * @default 10000
   */
  headersTimeoutMs?: number;
  /**
   * A whole request must arrive, and its answer be taken up, within this
   * many milliseconds.
   * @default 60000
   */
  requestTimeoutMs?: number;
  /**
   * A request's handler must answer within this many milliseconds; past it
   * the request is answered 503 and its connection closed.
   * @default 30000
   */
  handlerTimeoutMs?: number;
  /**
   * Request body bytes held in memory at once over all connections (at
   * least `maxBodyBytes`); past it a request gets 503 with `Retry-After`.
   * @default 67108864 (64 MiB)
   */
  maxBufferedBodyBytes?: number;
  /**
   * The restore of the hooks' and the gateway's state begins once this
   * settles (the listener answers meanwhile, hooks and model calls wait):
   * for a test that looks at the server during a restore, or an embedder
   * that fills the store first.
   * @default the restore begins when the listener opens
   */
  restoreAfter?: Promise<unknown>;
}

/** The server refuses to start as configured. */
export class IngestConfigError extends Error {
  /**
   * Create a `IngestConfigError`.
   *
   * @param message What is wrong and what to do.
   * @param options Cause.
   */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "IngestConfigError";
  }
}

/**
 * Whether a host name or address is loopback.
 *
 * @param host Host name or address.
 * @returns True for 127.0.0.0/8, ::1 and localhost.
 */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h === "::1" || /^127(\.\d{1,3}){3}$/.test(h);
}

/** The ingest HTTP server. */
export class IngestServer {
  readonly #store: HarnessStore;
  readonly #options: IngestServerOptions;
  #server: Http1Server | null = null;
  #url = "";
  #stats: IngestStats | null = null;
  #gateway: ModelGateway | null = null;
  #stopped: Promise<void> = Promise.resolve();
  #restored: Promise<void> = Promise.resolve();
  readonly #stopRestore = new AbortController();
  #markStopped: () => void = () => {};

  /**
   * Create a `IngestServer`.
   *
   * @param store An open, writable store (the server appends and reads only).
   * @param options Address, port, limits, token, redaction.
   */
  constructor(store: HarnessStore, options: IngestServerOptions = {}) {
    this.#store = store;
    this.#options = options;
  }

  /**
   * Bind and start answering.
   *
   * @returns The base URL, e.g. `http://127.0.0.1:8848`.
   * @throws {IngestConfigError} For a non-loopback address without
   *   `allowRemote` and a token, or a port already in use.
   */
  start(): Promise<string> {
    // Resolves once the listener is open; the restore goes on behind it
    // (`restored`).
    return new Promise((resolve) => resolve(this.#listen()));
  }

  #listen(): string {
    const host = this.#options.host ?? DEFAULT_HOST;
    const port = this.#options.port ?? DEFAULT_PORT;
    if (!isLoopback(host)) {
      if (!this.#options.allowRemote) {
        throw new IngestConfigError(
          `Refusing to bind ${host}: it is not a loopback address. Pass --allow-remote and set HARNESS_INGEST_TOKEN to accept remote events`,
        );
      }
      if (!this.#options.token) {
        throw new IngestConfigError(
          `Binding ${host} needs a bearer token: set HARNESS_INGEST_TOKEN`,
        );
      }
    }
    const correlator = this.#options.correlator ?? new ToolCallCorrelator();
    const sessions = this.#options.sessions ?? new SessionMemory();
    // The listener opens first; the hooks' and the gateway's state is
    // restored behind it (issue 44): hooks and model calls wait for it.
    let markRestored!: () => void;
    const restored = new Promise<void>((r) => markRestored = r);
    let markHooks!: () => void;
    const hooksRestored = new Promise<void>((r) => markHooks = r);
    // Loopback servers answer only to their own names (DNS rebinding).
    let allowed: Set<string> | null = null;
    const { answer, stats, gateway, table } = createIngestHandler(this.#store, {
      activeCapture: activeCaptureReader(this.#store.root),
      ...this.#options,
      correlator,
      sessions,
      restored: { hooks: hooksRestored, model: restored },
      hostAllowed: isLoopback(host)
        ? (h) => allowed === null || allowed.has(h.toLowerCase())
        : null,
    });
    stats.restoring = true;
    stats.held_for_restore = 0;
    this.#gateway = gateway;
    this.#stats = stats;
    this.#stopped = new Promise((r) => this.#markStopped = r);
    let http: Http1Server;
    try {
      http = new Http1Server(answer, {
        hostname: host,
        port,
        maxBodyBytes: this.#options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
        maxConnections: this.#options.maxConnections,
        idleTimeoutMs: this.#options.idleTimeoutMs,
        headersTimeoutMs: this.#options.headersTimeoutMs,
        requestTimeoutMs: this.#options.requestTimeoutMs,
        handlerTimeoutMs: this.#options.handlerTimeoutMs,
        maxBufferedBodyBytes: this.#options.maxBufferedBodyBytes,
        longRunning: (method, target) => table.longRunning(method, target),
        onError: errorAnswer,
        // Refused by the listener: in the shape of the request's route.
        protocolError: (err, head) => {
          if (head === null) return errorAnswer(err);
          const { route, match } = table.resolve(head.method, head.target);
          const header = (name: string) =>
            head.headers.find(([k]) => k === name)?.[1] ?? null;
          return errorAnswer(
            err,
            errorShapeOf(route, {
              req: { method: head.method, header },
              path: match.path,
            }),
          );
        },
      });
    } catch (err) {
      if (err instanceof Deno.errors.AddrInUse) {
        throw new IngestConfigError(
          `Port ${port} on ${host} is in use: is another ingest server running? ("ingest.ts status"), or pass --port`,
          { cause: err },
        );
      }
      throw err;
    }
    this.#server = http;
    stats.connections = http.stats;
    const a = http.addr;
    const shown = a.hostname.includes(":") ? `[${a.hostname}]` : a.hostname;
    this.#url = `http://${shown}:${a.port}`;
    allowed = new Set(
      [shown, "127.0.0.1", "localhost", "[::1]"].map((n) =>
        `${n.toLowerCase()}:${a.port}`
      ),
    );
    // Writers refused by the store lock learn where to send events.
    this.#store.lock?.update({ role: "ingest-server", url: this.#url });
    this.#restored = this.#restore({
      correlator,
      sessions,
      gateway,
      stats,
      hooksDone: markHooks,
    }).finally(() => {
      markHooks();
      markRestored();
    });
    return this.#url;
  }

  /**
   * Read the open captures' spools into the correlator, the session memory
   * and the gateway's book, counting on `stats`. Never throws: a restore
   * that fails is reported on `/health` (`restore_error`) and the held
   * requests go on without it (observation fails open).
   */
  async #restore(
    to: {
      correlator: ToolCallCorrelator;
      sessions: SessionMemory;
      gateway: ModelGateway | null;
      stats: IngestStats;
      /** The hooks' state is back: held hooks go on. */
      hooksDone: () => void;
    },
  ): Promise<void> {
    const { stats } = to;
    const signal = this.#stopRestore.signal;
    const t0 = performance.now();
    try {
      const hold = this.#options.restoreAfter;
      if (hold) {
        await Promise.race([
          hold.catch(() => {}),
          new Promise((r) => signal.addEventListener("abort", r)),
        ]);
      }
      const r = await restoreHookState(this.#store, {
        correlator: to.correlator,
        sessions: to.sessions,
        signal,
      });
      stats.restored_pending_calls = r.pending;
      stats.restored_subagent_links = r.subagents;
      // Hooks need no more; the gateway's restore reads on for model calls
      // (what a hook tells it meanwhile, `observe`, only adds to its book).
      to.hooksDone();
      if (!signal.aborted && to.gateway) {
        stats.restored_conversations = await to.gateway.restore();
      }
    } catch (err) {
      stats.restore_error = (err as Error)?.message ?? String(err);
    } finally {
      stats.restoring = false;
      stats.restore_ms = Math.round(performance.now() - t0);
    }
  }

  /**
   * Resolves when the state hooks and model calls build on has been
   * restored from the spools (or the restore gave up; `/health` says why).
   * The listener answers before that: {@linkcode IngestServer.start}
   * resolves once it listens.
   */
  get restored(): Promise<void> {
    return this.#restored;
  }

  /** Base URL once started. */
  get url(): string {
    return this.#url;
  }

  /** Request and event counters. */
  get stats(): IngestStats | null {
    return this.#stats;
  }

  /** The model API routes (null when turned off or not started). */
  get modelGateway(): ModelGateway | null {
    return this.#gateway;
  }

  /** Resolves when the server has been closed. */
  get finished(): Promise<void> {
    return this.#stopped;
  }

  /** Stop listening and wait for in-flight requests. */
  async close(): Promise<void> {
    if (!this.#server) return;
    const s = this.#server;
    this.#server = null;
    // A restore still running stops; what it held is then answered.
    this.#stopRestore.abort();
    await this.#restored;
    await s.shutdown().catch(() => {});
    // What was answered is recorded before the store closes.
    await this.#gateway?.settled();
    this.#gateway?.close();
    this.#markStopped();
  }

  /** Same as {@linkcode IngestServer.close}. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
