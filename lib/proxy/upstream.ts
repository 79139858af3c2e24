/**
 * One upstream MCP server over stdio, kept for the proxy's life: started on
 * first use, restarted once on the next call after it exits, each call
 * bounded by a time-out. An answer over the message limit fails that call
 * with a {@linkcode MessageTooLargeError} and keeps the process (and its
 * state); output that is not JSON-RPC fails the calls waiting on it at
 * once, quoting what the upstream wrote.
 *
 * @module
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import { ProxiedTool } from "./proxied_tool.ts";
import {
  callError,
  describeRefused,
  refusedError,
  UpstreamError,
  type UpstreamState,
} from "./upstream_error.ts";
import { type RefusedOutput, UpstreamTransport } from "./upstream_transport.ts";

/** How to start an upstream. */
export interface StdioUpstream {
  /** Server name (the namespace of its tools). */
  server: string;
  /** Command to run. */
  command: string;
  /** Its arguments. */
  args?: string[];
  /** Extra environment (added to a minimal default one); null for none. */
  env?: Record<string, string> | null;
  /** Working directory. */
  cwd?: string | null;
}

/** Options of {@linkcode UpstreamConnection}. */
export interface UpstreamOptions {
  /**
   * Time-out of one call in milliseconds.
   * @default 60000
   */
  callTimeoutMs?: number;
  /**
   * Time-out of starting the upstream (spawn and MCP `initialize`) in
   * milliseconds, apart from the call time-out: a server run through `npx`
   * or `deno run` may first download or compile, and a short call time-out
   * must not fail its start on a busy machine.
   * @default 60000, or `callTimeoutMs` when that is longer
   */
  startTimeoutMs?: number;
  /**
   * Where the upstream's stderr goes ("pipe": kept, its last lines are
   * quoted when the upstream fails).
   * @default "inherit"
   */
  stderr?: "inherit" | "ignore" | "pipe";
  /**
   * Largest message read from a peer (the upstream, and the host), in bytes.
   * @default 10485760 (10 MiB)
   */
  maxMessageBytes?: number;
  /**
   * How long an upstream gets to exit after its stdin closes, and again
   * after SIGTERM, in milliseconds.
   * @default 1000
   */
  shutdownGraceMs?: number;
}

/** A live (or restartable) upstream. */
export class UpstreamConnection {
  /** The upstream server. */
  readonly upstream: StdioUpstream;
  readonly #options: UpstreamOptions;
  #client: Client | null = null;
  #transport: UpstreamTransport | null = null;
  #connecting: Promise<Client> | null = null;
  #stopping: Promise<void> | null = null;
  #state: UpstreamState = "idle";
  #lastError: string | null = null;
  #lastJunk: string | null = null;
  #starts = 0;
  readonly #waiting = new Map<AbortController, string>();

  /**
   * Create a `UpstreamConnection`.
   *
   * @param upstream How to start it.
   * @param options Time-out, stderr.
   */
  constructor(upstream: StdioUpstream, options: UpstreamOptions = {}) {
    this.upstream = upstream;
    this.#options = options;
  }

  /** Current state. */
  get state(): UpstreamState {
    return this.#state;
  }

  /** How many times the process was started. */
  get starts(): number {
    return this.#starts;
  }

  /** The running process's id, or null. */
  get pid(): number | null {
    return this.#transport?.pid ?? null;
  }

  get #timeoutMs(): number {
    return this.#options.callTimeoutMs ?? 60_000;
  }

  get #startTimeoutMs(): number {
    return this.#options.startTimeoutMs ?? Math.max(60_000, this.#timeoutMs);
  }

  /** A sentence on the upstream's state, for error results and logs. */
  describe(): string {
    return `upstream "${this.upstream.server}" (${this.upstream.command}) is ${this.#state}` +
      (this.#lastError ? `: ${this.#lastError}` : "");
  }

  /** Connect if not connected. */
  async connect(): Promise<Client> {
    if (this.#client && this.#state === "ready") return this.#client;
    this.#connecting ??= this.#start().finally(() => {
      this.#connecting = null;
    });
    return await this.#connecting;
  }

  async #start(): Promise<Client> {
    await this.#stopping;
    this.#state = "starting";
    this.#starts++;
    const u = this.upstream;
    const transport = new UpstreamTransport({
      command: u.command,
      args: u.args ?? [],
      env: { ...getDefaultEnvironment(), ...(u.env ?? {}) },
      ...(u.cwd ? { cwd: u.cwd } : {}),
      stderr: this.#options.stderr ?? "inherit",
      maxMessageBytes: this.#options.maxMessageBytes,
      shutdownGraceMs: this.#options.shutdownGraceMs,
    });
    transport.onrefused = (output) => this.#refused(output);
    const client = new Client({ name: "harness-mcp-proxy", version: "0.1.0" });
    client.onclose = () => {
      if (this.#client === client) {
        this.#state = "exited";
        this.#lastError ??= "the process closed its connection" +
          this.#stderrNote(transport);
        this.#client = null;
      }
    };
    this.#transport = transport;
    this.#lastJunk = null;
    try {
      await this.#guard(
        "initialize",
        (options) => client.connect(transport, options),
        this.#startTimeoutMs,
      );
    } catch (err) {
      this.#state = "failed";
      this.#lastError = ((err as { code?: number }).code === -32001
        ? `it did not answer initialize within ${this.#startTimeoutMs} ms`
        : (err instanceof SyntaxError ? "it " : "") + (err as Error).message) +
        this.#stderrNote(transport);
      await client.close().catch(() => {});
      await transport.close();
      throw new UpstreamError(u.server, "failed", this.describe(), {
        cause: err,
      });
    }
    this.#client = client;
    this.#state = "ready";
    this.#lastError = null;
    return client;
  }

  #stderrNote(transport: UpstreamTransport): string {
    const tail = transport.stderrTail.trim().split("\n").at(-1);
    return tail ? ` (its stderr ends: ${JSON.stringify(tail)})` : "";
  }

  /**
   * Run one request to the upstream with the call time-out (or `timeoutMs`), failed at once
   * (with the reason) when the upstream writes something that is not a
   * JSON-RPC message while it waits.
   */
  async #guard<T>(
    what: string,
    run: (options: RequestOptions) => Promise<T>,
    timeoutMs: number = this.#timeoutMs,
  ): Promise<T> {
    const ctrl = new AbortController();
    this.#waiting.set(ctrl, what);
    try {
      return await run({ signal: ctrl.signal, timeout: timeoutMs });
    } catch (err) {
      if (ctrl.signal.aborted && ctrl.signal.reason instanceof Error) {
        throw ctrl.signal.reason;
      }
      throw err;
    } finally {
      this.#waiting.delete(ctrl);
    }
  }

  /** The upstream wrote something that is not a deliverable message. */
  #refused(output: RefusedOutput): void {
    const said = describeRefused(output);
    this.#lastJunk = said;
    for (const [ctrl, what] of this.#waiting) {
      ctrl.abort(refusedError(output, `answered ${what} with ${said}`));
    }
  }

  /**
   * List the upstream's tools.
   *
   * @returns Its tools as {@linkcode ProxiedTool}s, in its order.
   */
  async listTools(): Promise<ProxiedTool[]> {
    const client = await this.connect();
    const tools: ProxiedTool[] = [];
    let cursor: string | undefined;
    do {
      const params = cursor ? { cursor } : {};
      const page: Awaited<ReturnType<Client["listTools"]>> = await this.#guard(
        "tools/list",
        (options) => client.listTools(params, options),
      );
      for (const t of page.tools) {
        const { name, inputSchema, outputSchema, description, ...extra } = t;
        tools.push(
          new ProxiedTool({
            server: this.upstream.server,
            name,
            input_schema: inputSchema as Record<string, unknown>,
            output_schema: (outputSchema as Record<string, unknown>) ?? null,
            description: description ?? "",
            extra,
          }),
        );
      }
      cursor = page.nextCursor;
    } while (cursor);
    return tools;
  }

  /**
   * Call one tool by the upstream's own name.
   *
   * @param name Tool name.
   * @param args Arguments.
   * @returns The upstream's result, unchanged.
   * @throws {UpstreamError} When the upstream exited, cannot start, timed
   *   out, or answered with something that is not JSON-RPC (quoted).
   * @throws {McpError} When the upstream answered with a protocol error.
   * @throws {MessageTooLargeError} When its answer is over the message limit
   *   (the process keeps running).
   */
  async callTool(
    name: string,
    args: Record<string, unknown>,
  ): Promise<unknown> {
    let client: Client;
    try {
      client = await this.connect();
    } catch (err) {
      if (err instanceof UpstreamError) throw err;
      throw new UpstreamError(
        this.upstream.server,
        this.#state,
        this.describe(),
        {
          cause: err,
        },
      );
    }
    try {
      return await this.#guard(
        `tools/call "${name}"`,
        (options) =>
          client.callTool({ name, arguments: args }, undefined, options),
      );
    } catch (err) {
      throw this.#callError(name, err);
    }
  }

  /** The error a failed call is reported with. */
  #callError(name: string, err: unknown): Error {
    return callError(err, {
      server: this.upstream.server,
      name,
      state: this.#state,
      describe: () => this.describe(),
      timeoutMs: this.#timeoutMs,
      partial: this.#transport?.partialLine ?? null,
      lastJunk: this.#lastJunk,
    });
  }

  /**
   * Stop the upstream (its stdin closed; SIGTERM, then SIGKILL, each after
   * the grace time); resolves once it is gone, whichever caller asked first.
   */
  async close(): Promise<void> {
    const client = this.#client;
    const transport = this.#transport; // also one still initializing
    this.#client = null;
    this.#transport = null;
    this.#state = "idle";
    if (client || transport) {
      const stopping = Promise.all([client?.close(), transport?.close()])
        .then(() => {}, () => {});
      this.#stopping = stopping;
      await stopping;
      if (this.#stopping === stopping) this.#stopping = null;
    } else {
      await this.#stopping;
    }
    await this.#connecting?.catch(() => {});
  }
}

/**
 * List an upstream's tools (starts it, lists, stops it).
 *
 * @param upstream How to start it.
 * @returns Its tools.
 */
export async function discoverStdioTools(
  upstream: StdioUpstream,
): Promise<ProxiedTool[]> {
  const conn = new UpstreamConnection(upstream, { stderr: "ignore" });
  try {
    return await conn.listTools();
  } finally {
    await conn.close();
  }
}

/**
 * Call one tool on an upstream (starts it, calls, stops it).
 *
 * @param upstream How to start it.
 * @param call The upstream's tool name and the arguments.
 * @returns The result, unchanged.
 */
export async function callStdioTool(
  upstream: StdioUpstream,
  call: { name: string; args: Record<string, unknown> },
): Promise<unknown> {
  const { name, args } = call;
  const conn = new UpstreamConnection(upstream, { stderr: "ignore" });
  try {
    return await conn.callTool(name, args);
  } finally {
    await conn.close();
  }
}
