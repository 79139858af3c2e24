/**
 * Canonical `harness.trace.v1` events: constructors for every kind, canonical JSON, hashes, the hash chain and its streaming check, ids, JSONL reading.
 *
 * @module
 */
export { canonicalJson } from "./canonical_json.ts";
export {
  DIGEST_PREFIX,
  GENESIS_HASH,
  isDigest,
  sha256Digest,
  sha256Hex,
} from "./hash.ts";
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
} from "./event.ts";
export {
  annotation,
  type AnnotationPayload,
  episodeFinished,
  type EpisodeFinishedPayload,
  episodeStarted,
  type EpisodeStartedPayload,
  message,
  type MessagePayload,
} from "./episode_events.ts";
export { type EventContext, type EventOptions, makeEvent } from "./events.ts";
export {
  modelRequested,
  type ModelRequestedPayload,
  modelResponded,
  type ModelRespondedPayload,
} from "./model_events.ts";
export {
  blackboardWrite,
  type BlackboardWritePayload,
  nodeEnter,
  nodeExit,
  type NodePayload,
} from "./runtime_events.ts";
export {
  type ExposedTool,
  toolCallCompleted,
  type ToolCallCompletedPayload,
  toolCallFailed,
  type ToolCallFailedPayload,
  toolCallStarted,
  type ToolCallStartedPayload,
  type ToolRef,
  toolsetExposed,
  type ToolsetExposedPayload,
} from "./tool_events.ts";
export { InvalidIdError, isValidId, MAX_ID_LENGTH, validateId } from "./ids.ts";
export { EventShapeError, validateEvent } from "./validate.ts";
export {
  type ChainHead,
  computeEventHash,
  GENESIS_HEAD,
  HashChainer,
  type SealedEvent,
} from "./chain.ts";
export {
  type ChainProblem,
  type ChainProblemKind,
  type ChainReport,
  checkLine,
  splitLines,
  splitLinesSync,
  type SpoolLine,
  verifyChain,
  type VerifyChainOptions,
} from "./jsonl.ts";
