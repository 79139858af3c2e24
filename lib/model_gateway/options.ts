/**
 * The model gateway's options, defaults and counters.
 *
 * @module
 */

import type { ServedPackage } from "./serving.ts";
import type { HarnessStore } from "../store/store.ts";
import type { UnsealedEvent } from "../trace/event.ts";

/** OpenAI's public API, as its SDK's base URL (with `/v1`). */
export const DEFAULT_UPSTREAM_OPENAI = "https://api.openai.com/v1";
/** Anthropic's public API, as its SDK's base URL (without `/v1`). */
export const DEFAULT_UPSTREAM_ANTHROPIC = "https://api.anthropic.com";
/** How long an upstream may take to answer in full (ms): the SDKs' own default. */
export const DEFAULT_UPSTREAM_TIMEOUT_MS = 600_000;

/** Options of the model API routes. */
export interface ModelGatewayOptions {
  /** OpenAI-compatible upstream, as the OpenAI SDK's base URL. @default DEFAULT_UPSTREAM_OPENAI */
  upstreamOpenai?: string;
  /** Anthropic upstream, as the Anthropic SDK's base URL. @default DEFAULT_UPSTREAM_ANTHROPIC */
  upstreamAnthropic?: string;
  /** Milliseconds an upstream may take to answer in full; then 504. @default 600000 */
  upstreamTimeoutMs?: number;
  /** Exchanges waiting to be recorded; past it one is not recorded (and counted). @default 1024 */
  maxRecordQueue?: number;
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
  /** Exchanges waiting to be recorded. */
  queued: number;
  /** Tool calls of the model waiting for their results. */
  pending_calls: number;
  /** When the last request arrived (ISO 8601), or null. */
  last_request_at: string | null;
  /** The upstreams (origins only). */
  upstreams: { openai: string; anthropic: string };
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
