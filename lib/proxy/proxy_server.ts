/**
 * The proxy as an MCP server: {@linkcode buildStdioProxyServer} (discover,
 * then answer `tools/list` and `tools/call` on any transport) and
 * {@linkcode serveProxy} (on this process's stdin and stdout until the
 * host closes stdin or a signal aborts, then the upstreams are stopped).
 *
 * @module
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  type CallToolRequest,
  CallToolRequestSchema,
  ListToolsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { EventSink } from "../tool_gateway/event_sink.ts";
import { McpProxy, type McpProxyOptions } from "./mcp_proxy.ts";
import { StdioTransport } from "./stdio_transport.ts";
import type { StdioUpstream } from "./upstream.ts";

/** Options of {@linkcode buildStdioProxyServer}. */
export interface ProxyServerOptions extends McpProxyOptions {
  /** Where events go. */
  sink: EventSink;
}

/** Options of {@linkcode serveProxy}. */
export interface ServeProxyOptions extends ProxyServerOptions {
  /** Stops the proxy (as the host closing stdin does) when aborted. */
  signal?: AbortSignal;
}

/**
 * Build the proxy server: discovers the upstreams' tools, emits
 * `toolset.exposed`, and answers `tools/list` and `tools/call`.
 *
 * @param upstream One upstream or several.
 * @param options Where events go (`sink`), capture, episode, name, time-outs.
 * @returns The MCP server (connect it to a transport) and the proxy.
 * @throws {UpstreamError} When an upstream cannot start or list its tools
 *   (the upstreams are stopped first).
 */
export async function buildStdioProxyServer(
  upstream: StdioUpstream | StdioUpstream[],
  options: ProxyServerOptions,
): Promise<{ server: Server; proxy: McpProxy }> {
  const proxy = new McpProxy(
    Array.isArray(upstream) ? upstream : [upstream],
    options.sink,
    options,
  );
  try {
    await proxy.discover();
  } catch (err) {
    await proxy.close();
    throw err;
  }
  proxy.toolsetEvent();
  return { server: proxyServer(proxy, options), proxy };
}

/**
 * The MCP server over a proxy; its tool requests wait for `ready` (the
 * discovery), so a host can initialize while the upstreams start.
 */
function proxyServer(
  proxy: McpProxy,
  options: McpProxyOptions,
  ready: Promise<unknown> = Promise.resolve(),
): Server {
  const server = new Server(
    { name: options.name ?? "harness-mcp-proxy", version: "0.1.0" },
    { capabilities: { tools: {} } },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => {
    await ready;
    return {
      tools: [...proxy.tools.values()].map((t) => ({
        ...t.extra,
        name: t.namespaced,
        description: t.description,
        inputSchema: t.input_schema,
        ...(t.output_schema ? { outputSchema: t.output_schema } : {}),
      })),
    };
  });
  server.setRequestHandler(CallToolRequestSchema, async (
    req: CallToolRequest,
    extra: { requestId?: string | number },
  ) => {
    await ready;
    return await proxy.call(
      req.params.name,
      (req.params.arguments ?? {}) as Record<string, unknown>,
      extra?.requestId !== undefined ? String(extra.requestId) : null,
    );
  });
  server.onclose = () => {
    proxy.close();
  };
  return server;
}

/**
 * Serve the proxy on this process's stdin/stdout until the host closes
 * stdin (the first step of MCP's stdio shutdown) or `options.signal`
 * aborts; the upstreams are stopped before it resolves, also when that
 * happens while they are still starting. The host is served from the
 * start (its tool requests wait for the upstreams' tools). A message over
 * the limit either way gets a JSON-RPC error naming it; nothing closes the
 * connection but the host.
 *
 * @param upstream One upstream or several.
 * @param options Where events go (`sink`), capture, episode, name,
 *   time-outs, message limit, signal.
 * @returns The proxy, stopped, once the host is gone.
 * @throws {UpstreamError} When an upstream cannot start or list its tools
 *   (and the host is still there).
 */
export async function serveProxy(
  upstream: StdioUpstream | StdioUpstream[],
  options: ServeProxyOptions,
): Promise<McpProxy> {
  const proxy = new McpProxy(
    Array.isArray(upstream) ? upstream : [upstream],
    options.sink,
    options,
  );
  const transport = new StdioTransport({
    maxMessageBytes: options.maxMessageBytes,
  });
  const stop = () => void transport.close();
  options.signal?.addEventListener("abort", stop, { once: true });
  const ready = proxy.discover().then(() => void proxy.toolsetEvent());
  ready.catch(() => {}); // awaited below; the handlers await it too
  const server = proxyServer(proxy, options, ready);
  const closed = new Promise<void>((resolve) => {
    const prev = server.onclose;
    server.onclose = () => {
      prev?.();
      resolve();
    };
  });
  try {
    if (options.signal?.aborted) return proxy;
    await server.connect(transport);
    try {
      await ready;
    } catch (err) {
      if (transport.closed) return proxy; // the host left first
      throw err;
    }
    await closed;
    return proxy;
  } finally {
    options.signal?.removeEventListener("abort", stop);
    await transport.close();
    await proxy.close();
  }
}
