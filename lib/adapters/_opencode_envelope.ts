/**
 * The shape of host_c's envelope (checked by `parseHostCEnvelope` in
 * `opencode.ts`).
 *
 * @module
 */

/** The host_c envelope, as the plugin posts it. */
export interface HostCEnvelope {
  /** Always `harness.host_c-hook.v1`. */
  schema_version: string;
  /** Hook or bus event name. */
  hook: string;
  /** OpenCode session id (the episode id). */
  session_id: string;
  /** When the plugin saw it (ISO 8601 UTC with ms). */
  ts?: string;
  /** Tool hooks: the model's call id. */
  call_id?: string;
  /** Tool hooks: tool name. */
  tool?: string;
  /** Tool hooks: arguments. */
  args?: Record<string, unknown>;
  /** tool.execute.after: what the tool returned. */
  result?: unknown;
  /** tool.execute.after of a failed call, session.error: the error. */
  error?: unknown;
  /** MCP server of the tool, when the plugin knows it. */
  mcp_server?: string;
  /** The server's own tool name, with `mcp_server`. */
  mcp_tool?: string;
  /** session.created: parent session of a subagent. */
  parent_session_id?: string | null;
  /** chat.message: the user's text. */
  text?: string;
  /** Model id, when known. */
  model?: string;
  /** Why a session ended. */
  reason?: string;
  /** model.responded: token counts as the host gives them. */
  tokens?: Record<string, unknown>;
  /** model.responded: provider id. */
  provider?: string;
  /** model.responded: why the model stopped. */
  finish?: string;
  /** session.retry: attempt number. */
  attempt?: number;
  /** session.retry: what the host said. */
  message?: string;
  /** session.created: the session's working directory. */
  cwd?: string;
  /** tool.execute.after with `error`: the host refused the call. */
  refused?: boolean;
}
