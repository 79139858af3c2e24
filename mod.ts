/**
 * harness: record what AI agents do as canonical, hash-chained trace events,
 * and compile what they do repeatedly into deterministic, verified behavior.
 *
 * This module is the library: it has no side effects on import.
 *
 * @example Record two events and verify the chain
 * ```ts
 * import { annotation, HarnessStore } from "./mod.ts";
 * const root = await Deno.makeTempDir();
 * const store = new HarnessStore(root);
 * const sink = store.sink("cap_demo");
 * const ctx = {
 *   captureId: "cap_demo",
 *   episodeId: "ep_1",
 *   source: { host: "harness", adapter: "example", model: null },
 * };
 * sink.emit(annotation(ctx, { type: "note", text: "hello" }));
 * sink.emit(annotation(ctx, { type: "note", text: "world" }));
 * const report = await store.verifyCapture("cap_demo");
 * console.assert(report.ok && report.events === 2);
 * store.close();
 * await Deno.remove(root, { recursive: true });
 * ```
 *
 * @module
 */

export { canonicalJson } from "./lib/trace/canonical_json.ts";
export {
  DIGEST_PREFIX,
  GENESIS_HASH,
  isDigest,
  sha256Digest,
  sha256Hex,
} from "./lib/trace/hash.ts";
export {
  type Actor,
  ACTORS,
  EVENT_KINDS,
  type EventKind,
  type EventSource,
  type Payload,
  SCHEMA_VERSION,
  type TraceEvent,
  type UnsealedEvent,
} from "./lib/trace/event.ts";
export {
  annotation,
  type AnnotationPayload,
  blackboardWrite,
  type BlackboardWritePayload,
  episodeFinished,
  type EpisodeFinishedPayload,
  episodeStarted,
  type EpisodeStartedPayload,
  type EventContext,
  type EventOptions,
  type ExposedTool,
  makeEvent,
  message,
  type MessagePayload,
  modelRequested,
  type ModelRequestedPayload,
  modelResponded,
  type ModelRespondedPayload,
  nodeEnter,
  nodeExit,
  type NodePayload,
  toolCallCompleted,
  type ToolCallCompletedPayload,
  toolCallFailed,
  type ToolCallFailedPayload,
  toolCallStarted,
  type ToolCallStartedPayload,
  type ToolRef,
  toolsetExposed,
  type ToolsetExposedPayload,
} from "./lib/trace/events.ts";
export {
  InvalidIdError,
  isValidId,
  MAX_ID_LENGTH,
  validateId,
} from "./lib/trace/ids.ts";
export { EventShapeError, validateEvent } from "./lib/trace/validate.ts";
export {
  type ChainHead,
  computeEventHash,
  GENESIS_HEAD,
  HashChainer,
  type SealedEvent,
} from "./lib/trace/chain.ts";
export {
  type ChainProblem,
  type ChainProblemKind,
  type ChainReport,
  checkLine,
  LineSplitter,
  splitLines,
  splitLinesSync,
  type SpoolLine,
  verifyChain,
  type VerifyChainOptions,
} from "./lib/trace/jsonl.ts";
export { BlobError, BlobStore } from "./lib/store/blobs.ts";
export {
  type BlobRef,
  DEFAULT_BLOB_THRESHOLD,
  externalizePayload,
  type GetBlobText,
  isBlobRef,
  type PutBlob,
  resolveBlobRefs,
} from "./lib/store/blob_refs.ts";
export {
  type CaptureRecord,
  type EpisodeRecord,
  type EventIndexRow,
  SqliteIndex,
  type SqliteIndexOptions,
} from "./lib/store/index_db.ts";
export {
  isStoreLocked,
  type LockOwner,
  readLockOwner,
  StoreLock,
  StoreLockedError,
} from "./lib/store/lock.ts";
export {
  SpoolError,
  type SpoolOpenInfo,
  SpoolWriter,
  type SpoolWriterOptions,
} from "./lib/store/spool.ts";
export {
  JsonlTraceSink,
  type SinkWiring,
  type TraceSink,
} from "./lib/store/sink.ts";
export {
  HarnessStore,
  type HarnessStoreOptions,
  type OpenFinding,
  type ReadEventsOptions,
} from "./lib/store/store.ts";
export {
  type AdapterOptions,
  HookPayloadError,
  type HostAdapter,
  mcpLogicalId,
} from "./lib/adapters/common.ts";
export {
  type CallKey,
  type Correlation,
  type CorrelationResult,
  type PendingCall,
  ToolCallCorrelator,
} from "./lib/adapters/correlator.ts";
export { hostAToEvents } from "./lib/adapters/host_a.ts";
export { hostBToEvents } from "./lib/adapters/host_b.ts";
export {
  EnvelopeError,
  HOST_C_ENVELOPE,
  type HostCEnvelope,
  hostCToEvents,
  parseHostCEnvelope,
} from "./lib/adapters/host_c.ts";
export { adapterFor, type HostName, HOSTS } from "./lib/adapters/registry.ts";
export {
  type HostCPluginOptions,
  hostCPluginSource,
} from "./lib/adapters/host_c_plugin.ts";
export {
  createIngestHandler,
  DEFAULT_CAPTURE_ID,
  type IngestHandlerOptions,
  type IngestStats,
} from "./lib/ingest/handler.ts";
export {
  DEFAULT_REDACTION_RULES,
  parseRedactionRules,
  type RedactionCounts,
  type RedactionRule,
  redactValue,
  SECRET_KEY_PATTERN,
} from "./lib/ingest/redact.ts";
export { PayloadTooLargeError } from "./lib/ingest/errors.ts";
export { DEFAULT_MAX_BODY_BYTES } from "./lib/ingest/body.ts";
export {
  ACTIVE_CAPTURE_FILE,
  readActiveCapture,
  writeActiveCapture,
} from "./lib/ingest/active_capture.ts";
export {
  type Fidelity,
  FidelityTracker,
  inferFidelity,
  STATE_KEYS,
} from "./lib/control/fidelity.ts";
export {
  type CaptureInspection,
  CaptureNotFoundError,
  type EpisodeInspection,
  inspectCapture,
} from "./lib/control/inspect.ts";
export {
  type EnvironmentAdapter,
  parameterNames,
  ToolGateway,
  type ToolGatewayOptions,
  type WrapOptions,
} from "./lib/gateway/tool_gateway.ts";
export {
  type EventSink,
  HttpTraceSink,
  type HttpTraceSinkOptions,
} from "./lib/gateway/event_sink.ts";
export {
  openRecordingSink,
  type RecordingSink,
} from "./lib/gateway/open_sink.ts";
export {
  CaptureCoordinator,
  type CaptureCoordinatorOptions,
  CaptureExistsError,
  type CaptureSummary,
  type OutcomeOptions,
  type StartCaptureOptions,
} from "./lib/control/coordinator.ts";
export {
  type ArgumentKind,
  type ArgumentLineage,
  buildLineageReport,
  type CorrelationCounts,
  type EpisodeLineage,
  type LineageCounts,
  type LineageReport,
} from "./lib/control/lineage_report.ts";
export {
  buildMcpServer,
  CONTROL_TOOLS,
  loadMcpSdk,
  MCP_SDK,
  type McpSdk,
  type McpServerOptions,
  McpUnavailableError,
} from "./lib/control/mcp_server.ts";
export {
  comparePaths,
  DEFAULT_MAX_DEPTH,
  findAllSources,
  findSource,
  type FindSourceOptions,
} from "./lib/lineage/find_source.ts";
export {
  isIdentifierToken,
  isMeaningful,
  MIN_STRING_LENGTH,
  SMALL_INT_LIMIT,
  type Token,
  tokenize,
  words,
} from "./lib/lineage/meaningful.ts";
export {
  formatPath,
  parsePath,
  type PathSegment,
  resolvePath,
} from "./lib/lineage/paths.ts";
export {
  StateIndex,
  type StateIndexOptions,
} from "./lib/lineage/state_index.ts";
export {
  type Episode,
  type ModelDecision,
  type NormEpisode,
  NormStep,
  type NormStepFields,
  refMarker,
} from "./lib/lineage/records.ts";
export {
  argLineage,
  argumentLeaves,
  normalizeAll,
  normalizeEpisode,
  type NormalizeOptions,
  synthNodeId,
  synthStore,
} from "./lib/lineage/normalize.ts";
export {
  CAPTURE_EPISODE,
  loadEpisodes,
  type LoadEpisodesOptions,
} from "./lib/lineage/episodes.ts";
export {
  type ArgExpr,
  type BehaviorIr,
  type CompiledBehavior,
  type Decides,
  IR_VERSION,
  type IrNode,
  type IrNodeKind,
  type NodeProvenance,
  type Recovery,
  type Signature,
  type SignatureField,
} from "./lib/compiler/ir.ts";
export {
  changesState,
  type CoreStep,
  coreSteps,
  type Effects,
  errorCode,
} from "./lib/compiler/core_steps.ts";
export {
  extractFacts,
  type Fact,
  FACT_TYPES,
  factKey,
} from "./lib/compiler/facts.ts";
export {
  type Candidate,
  consolidate,
  type ConsolidateOptions,
  type Evidence,
} from "./lib/compiler/consolidate.ts";
export { staticize, type StaticizeOptions } from "./lib/compiler/staticize.ts";
export {
  type CompilerModel,
  type DecisionDetail,
  residualizeDecision,
  type ResidualizeOptions,
} from "./lib/compiler/residualize.ts";
export {
  promoteReplayVerified,
  type VerificationReport,
  verify,
  type VerifyOptions,
} from "./lib/compiler/verify.ts";
export {
  chooseCase,
  evalArg,
  evalArgs,
  resolveRef,
  UnresolvedRefError,
} from "./lib/compiler/evaluate.ts";
export {
  type BehaviorPackage,
  buildPackage,
  type BuildPackageOptions,
  compileBehavior,
  type CompileOptions,
  type CompileResult,
  PACKAGE_VERSION,
} from "./lib/compiler/package.ts";
export {
  describeNode,
  explainPackage,
  summarizePackage,
} from "./lib/compiler/explain.ts";
export {
  CANCEL_REASON,
  DESK_EFFECTS,
  DeskError,
  type DeskState,
  generateDeskEpisodes,
  ITEMS,
  type Order,
  OrderDesk,
  runDeskEpisode,
  type RunDeskEpisodeOptions,
  seededRandom,
} from "./lib/taskfamily/order_desk.ts";
export {
  loadPackage,
  PackageError,
  validatePackage,
} from "./lib/runtime/load_package.ts";
export {
  BehaviorRuntime,
  MissingCapabilityError,
  type ModelBinding,
  type ReactDecision,
  type RunOptions,
  type RunResult,
  type RunStep,
  type ToolRegistry,
} from "./lib/runtime/runtime.ts";
export { checkStructure } from "./lib/compiler/verify.ts";
export {
  type ConvertOptions,
  convertTrajectories,
  IMPORT_FORMATS,
  ImportError,
  type ImportFormat,
} from "./lib/importers/trajectories.ts";
export { fieldProblem } from "./lib/runtime/signature_check.ts";
export { callWithArgs } from "./lib/runtime/bind_args.ts";
export { recordedChoice } from "./lib/compiler/oracle.ts";
export {
  addCoverage,
  type Coverage,
  coverageOf,
  emptyCoverage,
} from "./lib/eval/coverage.ts";
export {
  type Config,
  type ProxyCommand,
  unwrapServerEntry,
  wrapServerEntry,
} from "./lib/installers/mcp_wrap.ts";
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
} from "./lib/installers/hook_settings.ts";
export {
  type Capabilities,
  createCapabilities,
  deskModel,
} from "./lib/taskfamily/desk_capabilities.ts";
