/**
 * The control plane: `CaptureCoordinator` (start, finish, outcome, summary, lineage, compile), inspection, fidelity, the lineage report, and the MCP control server.
 *
 * @module
 */
export {
  type Fidelity,
  FidelityTracker,
  inferFidelity,
  STATE_KEYS,
} from "../store/fidelity.ts";
export {
  type CaptureInspection,
  CaptureNotFoundError,
  type EpisodeInspection,
  inspectCapture,
} from "../store/inspect.ts";
export {
  CaptureCoordinator,
  type CaptureCoordinatorOptions,
  CaptureExistsError,
  type CaptureSummary,
  type OutcomeOptions,
  type StartCaptureOptions,
} from "./coordinator.ts";
export {
  type ArgumentKind,
  type ArgumentLineage,
  buildLineageReport,
  type CorrelationCounts,
  type EpisodeLineage,
  type LineageCounts,
  type LineageReport,
} from "./lineage_report.ts";
export {
  buildMcpServer,
  CONTROL_TOOL_NAMES,
  loadMcpSdk,
  loadStdioTransport,
  MCP_SDK,
  type McpSdk,
  type McpServerOptions,
  McpUnavailableError,
  type ZodLike,
} from "./mcp_server.ts";
