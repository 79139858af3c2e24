/**
 * One upstream MCP server over stdio, kept for the proxy's life: started on
 * first use, restarted once on the next call after it exits, each call
 * bounded by a time-out.
 *
 * @module
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  getDefaultEnvironment,
  StdioClientTransport,
} from "@modelcontextprotocol/sdk/client/stdio.js";
import { ProxiedTool } from "./proxied_tool.ts";

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

/** Where an upstream stands. */
export type UpstreamState = "idle" | "starting" | "ready" | "exited" | "failed";

/** An upstream that cannot answer (exited, failed to start, timed out). */
export class UpstreamError extends Error {
  /** The upstream's server name. */
  readonly server: string;
  /** Its state when the call failed. */
  readonly state: UpstreamState;
  /**
   * Create a `UpstreamError`.
   *
   * @param server Server name.
   * @param state Its state.
   * @param message What happened.
   * @param options Cause.
   */
  constructor(
    server: string,
    state: UpstreamState,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "UpstreamError";
    this.server = server;
    this.state = state;
  }
}

/** Options of {@linkcode UpstreamConnection}. */
export interface UpstreamOptions {
  /**
   * Time-out of one call in milliseconds.
   * @default 60000
   */
  callTimeoutMs?: number;
  /**
   * Where the upstream's stderr goes.
   * @default "inherit"
   */
  stderr?: "inherit" | "ignore" | "pipe";
}

/** A live (or restartable) upstream. */
export class UpstreamConnection {
  /** The upstream server. */
  readonly upstream: StdioUpstream;
  readonly #options: UpstreamOptions;
  #client: Client | null = null;
  #connecting: Promise<Client> | null = null;
  #state: UpstreamState = "idle";
  #lastError: string | null = null;
  #starts = 0;

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
    this.#state = "starting";
    this.#starts++;
    const u = this.upstream;
    const transport = new StdioClientTransport({
      command: u.command,
      args: u.args ?? [],
      env: { ...getDefaultEnvironment(), ...(u.env ?? {}) },
      ...(u.cwd ? { cwd: u.cwd } : {}),
      stderr: this.#options.stderr ?? "inherit",
    });
    const client = new Client({ name: "harness-mcp-proxy", version: "0.1.0" });
    client.onclose = () => {
      if (this.#client === client) {
        this.#state = "exited";
        this.#lastError ??= "the process closed its connection";
        this.#client = null;
      }
    };
    try {
      await client.connect(transport);
    } catch (err) {
      this.#state = "failed";
      this.#lastError = (err as Error).message;
      await client.close().catch(() => {});
      throw new UpstreamError(u.server, "failed", this.describe(), {
        cause: err,
      });
    }
    this.#client = client;
    this.#state = "ready";
    this.#lastError = null;
    return client;
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
      const page = await client.listTools(cursor ? { cursor } : {});
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
   * @throws {UpstreamError} When the upstream exited, cannot start, or timed out.
   * @throws {McpError} When the upstream answered with a protocol error.
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
      return await client.callTool({ name, arguments: args }, undefined, {
        timeout: this.#options.callTimeoutMs ?? 60_000,
      });
    } catch (err) {
      const code = (err as { code?: number }).code;
      if (this.#state !== "ready") {
        throw new UpstreamError(
          this.upstream.server,
          this.#state,
          this.describe(),
          {
            cause: err,
          },
        );
      }
      if (code === -32001) {
        throw new UpstreamError(
          this.upstream.server,
          "ready",
          `upstream "${this.upstream.server}" did not answer ${name} within ${
            this.#options.callTimeoutMs ?? 60_000
          } ms`,
          { cause: err },
        );
      }
      throw err;
    }
  }

  /** Stop the upstream. */
  async close(): Promise<void> {
    const c = this.#client;
    this.#client = null;
    this.#state = "idle";
    await c?.close().catch(() => {});
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
 * @param name The upstream's tool name.
 * @param args Arguments.
 * @returns The result, unchanged.
 */
export async function callStdioTool(
  upstream: StdioUpstream,
  name: string,
  args: Record<string, unknown>,
): Promise<unknown> {
  const conn = new UpstreamConnection(upstream, { stderr: "ignore" });
  try {
    return await conn.callTool(name, args);
  } finally {
    await conn.close();
  }
}
