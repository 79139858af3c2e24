/**
 * The control plane: `CaptureCoordinator` (start, finish, outcome, summary,
 * lineage, compile), inspection, fidelity, the lineage report, and the MCP
 * control server ({@linkcode buildMcpServer}: connect the server it returns
 * to a transport of the MCP SDK; `ingest.ts mcp` runs it on stdio).
 *
 * @module
 */
export {
  type Fidelity,
  FidelityTracker,
  inferFidelity,
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
  EpisodeNotFoundError,
  type OutcomeOptions,
  type PackagedEpisode,
  type PackagedInspection,
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
export { CONTROL_TOOL_NAMES } from "./mcp_tools.ts";
export { type CaughtUpOptions, serverCaughtUp } from "./server_caught_up.ts";
export {
  type EpisodePackageActivity,
  packageActivity,
  PackageActivityTracker,
  type PackageOutcome,
  type PackageTotals,
  packageTotals,
  type PassThrough,
  type RefusedCall,
  type ServedAnswer,
  type TokensSaved,
  tokensSavedText,
} from "./package_activity.ts";
export {
  buildMcpServer,
  type McpServerOptions,
  McpUnavailableError,
} from "./mcp_server.ts";
