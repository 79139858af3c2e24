/**
 * {@linkcode McpProxy}: namespaced copies of one or more upstreams' tools
 * (schemas exactly as declared); each call goes to the upstream's own tool
 * name, the upstream's result comes back unchanged, and canonical events
 * are recorded. Recording never changes what the client gets: a failing
 * sink is counted. `proxy_server.ts` serves it as an MCP server.
 *
 * @module
 */
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { UnsealedEvent } from "../trace/event.ts";
import type { EventContext } from "../trace/make_event.ts";
import { toolsetExposed } from "../trace/tool_events.ts";
import { validateId } from "../trace/ids.ts";
import type { EventSink } from "../tool_gateway/event_sink.ts";
import type { ProxiedTool } from "./proxied_tool.ts";
import {
  DEFAULT_PROXY_EPISODE,
  proxiedFinish,
  proxiedStart,
  PROXY_SOURCE,
} from "./record.ts";
import {
  type StdioUpstream,
  UpstreamConnection,
  type UpstreamOptions,
} from "./upstream.ts";
import { UpstreamError } from "./upstream_error.ts";

/** Options of {@linkcode McpProxy}. */
export interface McpProxyOptions extends UpstreamOptions {
  /** Capture to record into. */
  captureId: string;
  /**
   * Episode of the calls.
   * @default "ep_proxy"
   */
  episodeId?: string;
  /**
   * Name the proxy gives itself to clients.
   * @default "harness-mcp-proxy"
   */
  name?: string;
}

/** The proxy: upstreams, their tools by namespaced name, the sink. */
export class McpProxy {
  /** Where events go. */
  readonly sink: EventSink;
  /** Capture id. */
  readonly capture_id: string;
  /** Episode id. */
  readonly episode_id: string;
  /** Exposed tools by namespaced name. */
  readonly tools: Map<string, ProxiedTool> = new Map();
  readonly #upstreams = new Map<string, UpstreamConnection>();
  readonly #ctx: EventContext;
  readonly #inFlight = new Set<Promise<unknown>>();
  #closing: Promise<void> | null = null;
  #dropped = 0;
  #calls = 0;

  /**
   * Create a `McpProxy`.
   *
   * @param upstreams One or more upstreams (distinct server names).
   * @param sink Where events go.
   * @param options Capture, episode, time-outs.
   * @throws {TypeError} For duplicate server names or bad ids.
   */
  constructor(
    upstreams: StdioUpstream[],
    sink: EventSink,
    options: McpProxyOptions,
  ) {
    this.sink = sink;
    this.capture_id = validateId("capture", options.captureId);
    this.episode_id = validateId(
      "episode",
      options.episodeId ?? DEFAULT_PROXY_EPISODE,
    );
    this.#ctx = {
      captureId: this.capture_id,
      episodeId: this.episode_id,
      source: { ...PROXY_SOURCE },
    };
    for (const u of upstreams) {
      if (this.#upstreams.has(u.server)) {
        throw new TypeError(
          `Two upstreams are named "${u.server}": give each a distinct --server name`,
        );
      }
      this.#upstreams.set(u.server, new UpstreamConnection(u, options));
    }
  }

  /** Events the sink refused. */
  get droppedEvents(): number {
    return this.#dropped;
  }

  /** Calls forwarded. */
  get calls(): number {
    return this.#calls;
  }

  /** State of each upstream, by server name. */
  status(): Record<string, string> {
    return Object.fromEntries(
      [...this.#upstreams].map(([name, c]) => [name, c.describe()]),
    );
  }

  #emit(ev: UnsealedEvent): void {
    try {
      const r = this.sink.emit(ev);
      if (r instanceof Promise) r.catch(() => this.#dropped++);
    } catch {
      this.#dropped++;
    }
  }

  /**
   * Start the upstreams, list their tools and give each a unique name.
   *
   * @returns The exposed tools in order.
   */
  async discover(): Promise<ProxiedTool[]> {
    this.tools.clear();
    for (const conn of this.#upstreams.values()) {
      for (const tool of await conn.listTools()) {
        if (this.tools.has(tool.namespaced)) {
          const other = this.tools.get(tool.namespaced)!;
          if (other.server !== tool.server || other.name !== tool.name) {
            tool.disambiguate();
          }
        }
        this.tools.set(tool.namespaced, tool);
      }
    }
    return [...this.tools.values()];
  }

  /**
   * The `toolset.exposed` event for the current toolset (also emitted), with
   * each tool's MCP annotations as the upstream declared them.
   *
   * @returns The event.
   */
  toolsetEvent(): UnsealedEvent {
    const ev = toolsetExposed(this.#ctx, {
      origin: [...this.#upstreams.keys()].join(","),
      tools: [...this.tools.values()].map((t) => {
        const annotations = t.annotations;
        return {
          name: t.namespaced,
          logical_id: t.logicalId,
          description: t.description,
          input_schema: t.input_schema,
          ...(t.output_schema ? { output_schema: t.output_schema } : {}),
          ...(annotations ? { annotations } : {}),
        };
      }),
    });
    this.#emit(ev);
    return ev;
  }

  /**
   * Forward one call and record it.
   *
   * @param namespaced The exposed name.
   * @param args Arguments.
   * @param hostCallId The client's request id.
   * @returns The upstream's result unchanged, or an error result when the
   *   upstream exited, could not start or timed out.
   * @throws {McpError} For an unknown tool, a call after {@linkcode close},
   *   or the upstream's own protocol error.
   * @throws {MessageTooLargeError} When the upstream's answer is over the
   *   message limit (the upstream keeps running).
   */
  async call(
    namespaced: string,
    args: Record<string, unknown>,
    hostCallId?: string | null,
  ): Promise<Record<string, unknown>> {
    if (this.#closing) {
      // No upstream is started again once the proxy stops.
      throw new McpError(
        ErrorCode.ConnectionClosed,
        `The proxy is shutting down; ${namespaced} was not called`,
      );
    }
    const call = this.#call(namespaced, args, hostCallId);
    this.#inFlight.add(call);
    try {
      return await call;
    } finally {
      this.#inFlight.delete(call);
    }
  }

  async #call(
    namespaced: string,
    args: Record<string, unknown>,
    hostCallId?: string | null,
  ): Promise<Record<string, unknown>> {
    const tool = this.tools.get(namespaced);
    if (!tool) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Unknown tool: ${namespaced}`,
      );
    }
    this.#calls++;
    const started = proxiedStart(this.#ctx, { tool, args, hostCallId });
    this.#emit(started);
    const t0 = performance.now();
    const ms = () => Math.round((performance.now() - t0) * 1000) / 1000;
    const conn = this.#upstreams.get(tool.server)!;
    try {
      const result = await conn.callTool(tool.name, args) as Record<
        string,
        unknown
      >;
      this.#emit(proxiedFinish(this.#ctx, {
        tool,
        args,
        started,
        result,
        durationMs: ms(),
        hostCallId,
      }));
      return result;
    } catch (err) {
      const error = {
        name: (err as Error).name,
        message: (err as Error).message,
        ...((err as { code?: unknown }).code !== undefined
          ? { code: (err as { code: unknown }).code }
          : {}),
        upstream_state: conn.state,
      };
      this.#emit(proxiedFinish(this.#ctx, {
        tool,
        args,
        started,
        error,
        durationMs: ms(),
        hostCallId,
      }));
      if (err instanceof UpstreamError) {
        const restarts = err.state === "exited" || err.state === "failed";
        return {
          content: [{
            type: "text",
            text: `harness proxy: ${err.message}. The proxy is still running${
              restarts ? "; the upstream is restarted on the next call" : ""
            }.`,
          }],
          isError: true,
        };
      }
      throw err;
    }
  }

  /**
   * Stop every upstream and wait for the calls in flight to be recorded
   * (they fail: their upstream is gone). Safe to call more than once: every
   * caller waits for the same stop.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      await Promise.all(
        [...this.#upstreams.values()].map((c) => c.close()),
      );
      await Promise.allSettled([...this.#inFlight]);
    })();
    return this.#closing;
  }
}
