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
} from "./events.ts";
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
