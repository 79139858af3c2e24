/**
 * Host adapters (Claude Code, Gemini CLI and OpenCode: the seed's `host_a`,
 * `host_b`, `host_c`) that turn hook payloads into canonical events, with
 * what an ingest process shares between payloads (the tool-call correlator,
 * the session memory) and the OpenCode plugin generator.
 *
 * The installers (merging hooks, the plugin and proxy entries into a host's
 * settings and taking them out) are not a library face: they run as
 * `ingest.ts install` and `ingest.ts uninstall`.
 *
 * @module
 */
export {
  type AdapterOptions,
  HookPayloadError,
  type HostAdapter,
  mcpLogicalId,
} from "./common.ts";
export {
  type CallKey,
  type Correlation,
  type CorrelationResult,
  type PendingCall,
  ToolCallCorrelator,
} from "./correlator.ts";
export { hostAToEvents } from "./claude_code.ts";
export { hostBToEvents } from "./gemini_cli.ts";
export { EnvelopeError, HOST_C_ENVELOPE, hostCToEvents } from "./opencode.ts";
export { adapterFor, type HostName, HOSTS } from "./host_adapters.ts";
export {
  type HostCPluginOptions,
  hostCPluginSource,
} from "../installers/host_c_plugin.ts";
export { SessionMemory } from "./session_memory.ts";
