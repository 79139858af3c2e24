/**
 * {@linkcode IngestServer}: the loopback HTTP listener over
 * {@linkcode createIngestHandler}. Not exported from `mod.ts` (it listens on
 * the network); `ingest.ts` exports it.
 *
 * @module
 */
import { ToolCallCorrelator } from "../adapters/correlator.ts";
import { restorePending } from "./resume.ts";
import { errorResponse } from "./errors.ts";
import type { HarnessStore } from "../store/store.ts";
import {
  createIngestHandler,
  type IngestHandlerOptions,
  type IngestStats,
} from "./handler.ts";
import { activeCaptureReader } from "./active_capture.ts";

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
  #server: Deno.HttpServer | null = null;
  #url = "";
  #stats: IngestStats | null = null;
  #closing = false;
  #stopped: Promise<void> = Promise.resolve();
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
  async start(): Promise<string> {
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
    const restored = await restorePending(this.#store, correlator);
    // Loopback servers answer only to their own names (DNS rebinding).
    let allowed: Set<string> | null = null;
    const { handler, stats } = createIngestHandler(this.#store, {
      activeCapture: activeCaptureReader(this.#store.root),
      ...this.#options,
      correlator,
      hostAllowed: isLoopback(host)
        ? (h) => allowed === null || allowed.has(h.toLowerCase())
        : null,
    });
    stats.restored_pending_calls = restored;
    this.#stats = stats;
    this.#closing = false;
    this.#stopped = new Promise((r) => this.#markStopped = r);
    return await new Promise((resolve, reject) => {
      try {
        this.#server = Deno.serve({
          hostname: host,
          port,
          onListen: (addr) => {
            const a = addr as Deno.NetAddr;
            const shown = a.hostname.includes(":")
              ? `[${a.hostname}]`
              : a.hostname;
            this.#url = `http://${shown}:${a.port}`;
            allowed = new Set(
              [shown, "127.0.0.1", "localhost", "[::1]"].map((n) =>
                `${n.toLowerCase()}:${a.port}`
              ),
            );
            // Writers refused by the store lock learn where to send events.
            this.#store.lock?.update({ role: "ingest-server", url: this.#url });
            resolve(this.#url);
          },
          onError: errorResponse,
        }, handler);
        this.#watch(this.#server, host, handler);
      } catch (err) {
        if (err instanceof Deno.errors.AddrInUse) {
          reject(
            new IngestConfigError(
              `Port ${port} on ${host} is in use: is another ingest server running? ("ingest.ts status"), or pass --port`,
              { cause: err },
            ),
          );
        } else reject(err);
      }
    });
  }

  /**
   * Deno.serve's accept loop ends with an error when the process runs out
   * of file handles (many idle connections): rather than die, listen again
   * on the same address once handles are free (connections are refused in
   * between; hooks fail open), counting it on `/health`.
   */
  #watch(
    server: Deno.HttpServer,
    host: string,
    handler: (req: Request) => Promise<Response>,
  ): void {
    server.finished.then(() => {}, async (err) => {
      if (this.#closing || this.#server !== server) return;
      const stats = this.#stats!;
      stats.listener_restarts = (stats.listener_restarts ?? 0) + 1;
      stats.last_listener_error = String(err);
      const port = Number(new URL(this.#url).port);
      while (!this.#closing) {
        await new Promise((r) => setTimeout(r, 250));
        if (this.#closing) return;
        try {
          const again = Deno.serve({
            hostname: host,
            port,
            onListen: () => {},
            onError: errorResponse,
          }, handler);
          this.#server = again;
          this.#watch(again, host, handler);
          return;
        } catch {
          // Still out of handles (or the port is held): try again shortly.
        }
      }
    });
  }

  /** Base URL once started. */
  get url(): string {
    return this.#url;
  }

  /** Request and event counters. */
  get stats(): IngestStats | null {
    return this.#stats;
  }

  /** Resolves when the server has been closed. */
  get finished(): Promise<void> {
    return this.#stopped;
  }

  /** Stop listening and wait for in-flight requests. */
  async close(): Promise<void> {
    this.#closing = true;
    if (!this.#server) return;
    const s = this.#server;
    this.#server = null;
    await s.shutdown().catch(() => {});
    this.#markStopped();
  }

  /** Same as {@linkcode IngestServer.close}. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
