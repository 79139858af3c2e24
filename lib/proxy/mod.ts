/**
 * The recording MCP stdio proxy: put it in front of an MCP server and every
 * tool call through it is recorded as canonical events, with the upstream's
 * tools, schemas and results unchanged.
 *
 * @module
 */
export { McpProxy, type McpProxyOptions } from "./mcp_proxy.ts";
export {
  buildStdioProxyServer,
  type ProxyServerOptions,
  serveProxy,
  type ServeProxyOptions,
} from "./proxy_server.ts";
export {
  DEFAULT_MAX_MESSAGE_BYTES,
  MessageTooLargeError,
} from "./message_limit.ts";
export {
  MAX_TOOL_NAME,
  namespacedName,
  ProxiedTool,
  toolAnnotations,
} from "./proxied_tool.ts";
export {
  DEFAULT_PROXY_EPISODE,
  type ProxiedCall,
  type ProxiedOutcome,
  PROXY_SOURCE,
  recordProxiedCall,
  type RecordProxiedCallOptions,
} from "./record.ts";
export {
  callStdioTool,
  discoverStdioTools,
  type StdioUpstream,
  UpstreamConnection,
  type UpstreamOptions,
} from "./upstream.ts";
export { UpstreamError, type UpstreamState } from "./upstream_error.ts";
