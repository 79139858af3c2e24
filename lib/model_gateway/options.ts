/**
 * The model gateway's options, defaults and counters.
 *
 * @module
 */

import type { ServedPackage } from "./serving.ts";
import { OPENAI_UPSTREAM } from "./wires/openai_chat/mod.ts";
import { anthropicMessagesWireSpec } from "./wires/anthropic_messages/mod.ts";
import type { HarnessStore } from "../store/store.ts";
import type { UnsealedEvent } from "../trace/event.ts";

/** OpenAI's public API, as its SDK's base URL (with `/v1`): the `openai` upstream's default (its wire folder has it). */
export const DEFAULT_UPSTREAM_OPENAI: string = OPENAI_UPSTREAM.default;
/** Anthropic's public API, as its SDK's base URL (without `/v1`): the `anthropic` upstream's default. */
export const DEFAULT_UPSTREAM_ANTHROPIC: string =
  anthropicMessagesWireSpec.upstream
    .default;
/** How long an upstream may take to answer in full (ms): the SDKs' own default. */
export const DEFAULT_UPSTREAM_TIMEOUT_MS = 600_000;
/**
 * The most bytes of one answer the gateway holds (a whole answer, as
 * decompressed; a stream's events read for its record): 16 MiB.
 */
export const DEFAULT_MAX_ANSWER_BYTES = 16 * 1024 * 1024;
/**
 * The most bytes the gateway keeps for recording at once: answers being
 * read and exchanges waiting in memory (128 MiB).
 */
export const DEFAULT_MAX_KEPT_BYTES = 128 * 1024 * 1024;

/** Options of the model API routes. */
export interface ModelGatewayOptions {
  /**
   * Each upstream's base URL, as its SDK takes it, by the upstream's name
   * (`openai`, `anthropic`, `gemini`: `wires/registry.ts`'s `UPSTREAMS`);
   * one not given is its public API.
   */
  upstreams?: Record<string, string>;
  /** The `openai` upstream (as `upstreams.openai`, which wins). */
  upstreamOpenai?: string;
  /** The `anthropic` upstream (as `upstreams.anthropic`, which wins). */
  upstreamAnthropic?: string;
  /** Milliseconds an upstream may take to answer in full; then 504. @default 600000 */
  upstreamTimeoutMs?: number;
  /**
   * Ask loopback `http:` upstreams through the gateway's own HTTP/1.1
   * client (`http1_client/`); off: every upstream through `fetch` (the
   * benchmark's comparison). @default true
   */
  ownClient?: boolean;
  /**
   * Exchanges waiting to be recorded in memory; past it they wait in the
   * store's spill on disk (none is dropped); what waits in memory is what
   * a `kill -9` can lose. @default 64
   */
  maxRecordQueue?: number;
  /**
   * Bytes of one answer the gateway holds; past it a whole answer is
   * relayed as it comes and its record holds no answer.
   * @default DEFAULT_MAX_ANSWER_BYTES
   */
  maxAnswerBytes?: number;
  /**
   * Bytes kept for recording at once (answers being read, exchanges
   * waiting in memory); past it answers are not kept for their records and
   * waiting exchanges go to the spill. @default DEFAULT_MAX_KEPT_BYTES
   */
  maxKeptBytes?: number;
  /**
   * Record exchanges (off: each is forwarded and read, none stored; the
   * benchmark's arm without recording). @default true
   */
  record?: boolean;
  /**
   * Record each request's body whole but for its history: also the long
   * fields (tools, system prompt) the conversation's previous request had
   * the same, which are otherwise left out (`body_same_as_previous`;
   * `filledBody` puts them back). @default false
   */
  wholeBodies?: boolean;
  /**
   * Milliseconds an answered exchange waits before recording starts (so
   * requests that follow at once are answered first; tests hold it back to
   * stop a server with exchanges still waiting). @default 10
   */
  recordDelayMs?: number;
  /**
   * Message hashes the conversation memory holds over all conversations
   * (least recently used forgotten first). @default 524288
   */
  maxConversationMessages?: number;
  /**
   * Compiled packages served inside the agent: `""` at `/v1/…`, a name at
   * `/p/<name>/v1/…`.
   */
  packages?: Record<string, ServedPackage>;
}

/** Counters of the model API routes (on `/health` as `model_gateway`). */
export interface ModelGatewayStats {
  /** Requests on the model API routes. */
  requests: number;
  /** Of them, streamed answers. */
  streams: number;
  /** Exchanges recorded. */
  recorded: number;
  /** Exchanges forwarded but not recorded (see `last_miss`). */
  record_misses: number;
  /** Why the last one was not recorded (never a credential). */
  last_miss: string | null;
  /** Upstream unreachable or too slow (answered 502 or 504). */
  upstream_errors: number;
  /** Requests whose client went away before the answer was complete. */
  client_aborts: number;
  /** Exchanges waiting to be recorded (in memory and in the spill). */
  queued: number;
  /**
   * Requests whose arrival the recorder holds (their bytes, until the
   * exchange is recorded or spilled): in flight or waiting; 0 when idle.
   */
  requests_held: number;
  /** Exchanges written to the spill (the recorder could not take them then). */
  spilled?: number;
  /** Exchanges a stopped process left in the spill, recorded at start. */
  recorded_from_spill?: number;
  /** Answers not kept for their records (larger than the gateway holds). */
  not_kept?: number;
  /** Why the last one was not kept. */
  last_not_kept?: string | null;
  /** Tool calls of the model waiting for their results. */
  pending_calls: number;
  /** Bytes kept for recording now (answers being read, exchanges waiting in memory). */
  kept_bytes?: number;
  /** The most bytes kept for recording at once since start (at most `maxKeptBytes`). */
  kept_bytes_peak?: number;
  /** Message hashes the conversation memory holds (bounded). */
  conversation_messages?: number;
  /**
   * Long work under way in slices (the loop answers between them): a
   * large request's messages being read, or a large exchange's events being
   * written; null when none.
   */
  busy?: { what: "reading" | "recording"; done: number; of: number } | null;
  /** When the last request arrived (ISO 8601), or null. */
  last_request_at: string | null;
  /** The upstreams (origins only), by name. */
  upstreams: Record<string, string>;
  /** Packages served: route → `name@digest`. */
  packages?: Record<string, string>;
  /** Answers a package made itself (its lookups). */
  served?: number;
  /** Requests a package did not fit, forwarded untouched. */
  passed_through?: number;
  /** Why the last one did not fit. */
  last_pass_through?: string | null;
  /** State-changing calls of the model a package refused. */
  refusals?: number;
  /** Requests answered in words after the model's choices were refused three times. */
  gave_up?: number;
  /**
   * Answers a package could not check, so not relayed (answered with the
   * API's error instead): not the API's shape, more than one choice, larger
   * than it reads.
   */
  unchecked?: number;
  /** Why the last one could not be checked. */
  last_unchecked?: string | null;
}

/**
 * A gateway's counters before its first request.
 *
 * @param upstreams Each upstream's origin, by name (shown on `/health`).
 * @returns Every counter at zero.
 */
export function freshStats(
  upstreams: Record<string, string>,
): ModelGatewayStats {
  return {
    requests: 0,
    streams: 0,
    recorded: 0,
    record_misses: 0,
    last_miss: null,
    upstream_errors: 0,
    client_aborts: 0,
    queued: 0,
    requests_held: 0,
    pending_calls: 0,
    last_request_at: null,
    upstreams,
  };
}

/** What the gateway needs of the server. */
export interface ModelGatewayContext {
  /** The store it records into. */
  store: HarnessStore;
  /** The capture when the request names none (active, else default). */
  defaultCapture: () => string;
  /** Largest request body. */
  maxBodyBytes: number;
  /** Redaction applied to every event before it is sealed. */
  redact: (events: UnsealedEvent[]) => UnsealedEvent[];
}
