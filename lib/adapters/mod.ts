/**
 * Host adapters (host_a, host_b, host_c) that turn hook payloads into canonical events, the tool-call correlator, the OpenCode plugin generator, and the installers' settings merges.
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
export { hostAToEvents } from "./host_a.ts";
export { hostBToEvents } from "./host_b.ts";
export {
  EnvelopeError,
  HOST_C_ENVELOPE,
  type HostCEnvelope,
  hostCToEvents,
  parseHostCEnvelope,
} from "./host_c.ts";
export { adapterFor, type HostName, HOSTS } from "./registry.ts";
export { type HostCPluginOptions, hostCPluginSource } from "./host_c_plugin.ts";
export {
  type Config,
  type ProxyCommand,
  unwrapServerEntry,
  wrapServerEntry,
} from "../installers/mcp_wrap.ts";
export {
  addHarnessHooks,
  type HookEntry,
  type HookPlan,
  HOST_A_EVENTS,
  HOST_B_EVENTS,
  hostAPlan,
  hostBPlan,
  isHarnessEntry,
  removeHarnessHooks,
  type Settings,
} from "../installers/hook_settings.ts";
export { SessionMemory } from "./session_memory.ts";
