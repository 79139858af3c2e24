/**
 * The ingest handler's options, its counters (what `/health` shows) and
 * what its routes share.
 *
 * @module
 */
import type { RedactionRule } from "../trace/redact.ts";
import type { ToolCallCorrelator } from "../adapters/correlator.ts";
import type { ConnectionStats } from "./http1/mod.ts";
import type { ModelGatewayOptions } from "../model_gateway/options.ts";
import type { ModelGateway } from "../model_gateway/gateway.ts";
import type { HarnessStore } from "../store/store.ts";
import type { TraceEvent, UnsealedEvent } from "../trace/event.ts";
import type { SessionMemory } from "../adapters/session_memory.ts";
import type { OtlpIntakeStats } from "./otlp_intake.ts";

/** Capture that hook events go to when there is no `cap` and no active capture. */
export const DEFAULT_CAPTURE_ID = "default";

/** Options of {@linkcode createIngestHandler}. */
export interface IngestHandlerOptions {
  /**
   * Largest request body accepted, in bytes.
   * @default 8388608 (8 MiB)
   */
  maxBodyBytes?: number;
  /** When set, every request needs `Authorization: Bearer <token>`. */
  token?: string | null;
  /**
   * Requests handled at once; more are answered 503 with `Retry-After`.
   * @default 256
   */
  maxInFlight?: number;
  /**
   * Whether a `Host` header names this server (set for loopback servers,
   * against DNS rebinding); every host is allowed when absent.
   */
  hostAllowed?: ((host: string) => boolean) | null;
  /**
   * The active capture, asked on each hook request without `cap`.
   * @default () => null
   */
  activeCapture?: () => string | null;
  /**
   * Capture for hook events with no `cap` and no active capture.
   * @default "default"
   */
  defaultCaptureId?: string;
  /**
   * Redaction rules for hook-derived events, applied only when the store
   * does not redact itself (`HarnessStore({redaction: false})`): a store's
   * sinks redact every payload, on every route. `false` turns it off here.
   * @default DEFAULT_REDACTION_RULES
   */
  redaction?: readonly RedactionRule[] | false;
  /** Model id for `source.model` of hook events, when known. */
  model?: string | null;
  /** Correlator (one per server process). */
  correlator?: ToolCallCorrelator;
  /** What the hook adapters remember of each session (one per server process). */
  sessions?: SessionMemory;
  /** host_b: keep full model requests. */
  fullModelRequests?: boolean;
  /**
   * Secret that `POST /admin/shutdown` must carry in `x-harness-admin-key`
   * (written to the pid file, readable only by the owner); no admin route
   * without it.
   */
  adminKey?: string;
  /** Called by an authorized `POST /admin/shutdown`. */
  onShutdown?: () => void;
  /**
   * The model API routes (`/v1/chat/completions`, `/v1/responses`,
   * `/v1/messages` …): their upstreams; `false` turns them off.
   * @default {} (the providers' public APIs)
   */
  modelGateway?: ModelGatewayOptions | false;
  /** More to show on `/health` (replication). */
  healthExtra?: () => Record<string, unknown>;
  /**
   * What the routes wait for after a restart, while the server restores
   * from the spools what they build on: `hooks` settles once the
   * correlator's pending calls and the subagent links are back, `model`
   * once the gateway's conversations are too. Until then a hook (a model
   * call) is held, counted in `held_for_restore`, then recorded in the order
   * it came; every other route answers at once. Absent: nothing is held.
   */
  restored?: { hooks: Promise<unknown>; model: Promise<unknown> };
}

/** Counters the handler keeps (visible on `/health`). */
export interface IngestStats {
  /** Requests answered. */
  requests: number;
  /** Events recorded. */
  events: number;
  /** Hook requests answered with `ok: false`. */
  rejected_hooks: number;
  /** `/ingest` requests answered with a 4xx. */
  rejected_events: number;
  /** Pending tool calls given back to the correlator from the spools at start. */
  restored_pending_calls?: number;
  /** Subagent links given back to the session memory from the spools at start. */
  restored_subagent_links?: number;
  /** Conversations the model gateway gave back from the spools at start. */
  restored_conversations?: number;
  /**
   * True while the server restores the hooks' and the gateway's state from
   * the open captures' spools (the listener answers meanwhile; hooks and
   * model calls wait for it).
   */
  restoring?: boolean;
  /** Hooks and model calls waiting now for the restore to finish. */
  held_for_restore?: number;
  /** How long the restore took (ms), once done. */
  restore_ms?: number;
  /** Why the restore stopped short (hooks and model calls went on without it). */
  restore_error?: string;
  /** Tool calls pending now (started, not completed). */
  pending_calls?: number;
  /** Pending calls dropped to keep within the bound. */
  dropped_pending_calls?: number;
  /** Requests answered 503 because too many were in flight. */
  busy?: number;
  /** The listener's connection counters (cap, time-outs, accept errors). */
  connections?: ConnectionStats;
}

/**
 * What the routes of one handler share: the store, the options, the
 * counters, the correlator and session memory of the hook adapters, the
 * model gateway, and the one way events are redacted and written.
 */
export interface HandlerContext {
  /** The store (appended to and read only). */
  readonly store: HarnessStore;
  /** The handler's options. */
  readonly options: IngestHandlerOptions;
  /** Largest body read, in bytes. */
  readonly limit: number;
  /** The counters `/health` shows. */
  readonly stats: IngestStats;
  /** Tool calls of the hooks, started and not yet completed. */
  readonly correlator: ToolCallCorrelator;
  /** What the hook adapters remember of each session. */
  readonly sessions: SessionMemory;
  /** Capture of hook events with no `cap` and no active capture. */
  readonly defaultCapture: string;
  /** The model API routes (null when turned off). */
  readonly gateway: ModelGateway | null;
  /** The OTLP intake's counters. */
  readonly otlpStats: OtlpIntakeStats;
  /**
   * Resolves at once, or when what the route builds on has been restored
   * (`IngestHandlerOptions.restored`).
   *
   * @param route `hooks` or `model`.
   * @returns Whether the request was held.
   */
  afterRestore(route: "hooks" | "model"): Promise<boolean>;
  /**
   * Redact events by the handler's rules (unchanged when the store redacts).
   *
   * @param events Events before sealing.
   * @returns The events, redacted.
   */
  redact(events: UnsealedEvent[]): UnsealedEvent[];
  /**
   * Seal and write events of one capture with one write.
   *
   * @param events Events of one capture.
   * @returns The sealed events.
   */
  record(events: UnsealedEvent[]): TraceEvent[];
}
