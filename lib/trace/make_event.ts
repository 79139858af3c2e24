/**
 * Making an event: where and by whom ({@linkcode EventContext}), the options
 * every constructor takes, and {@linkcode makeEvent} for any kind. The
 * constructors of each kind are grouped beside it: `episode_events.ts`
 * (episodes, messages, annotations), `tool_events.ts` (tool calls and
 * toolsets), `model_events.ts` and `runtime_events.ts` (compiled behavior).
 * They build unsealed events; a sink assigns `sequence` and seals the hash
 * chain.
 *
 * @module
 */
import type {
  EventKind,
  EventSource,
  Payload,
  UnsealedEvent,
} from "./event.ts";
import { SCHEMA_VERSION } from "./event.ts";

/** Where and by whom an event is made. */
export interface EventContext {
  /** Owning capture. */
  captureId: string;
  /** Owning episode. */
  episodeId: string;
  /** Producer of the event. */
  source: EventSource;
  /**
   * Clock, for reproducible tests.
   * @default () => new Date()
   */
  now?: () => Date;
  /**
   * Id generator, for reproducible tests.
   * @default () => `evt_${crypto.randomUUID()}`
   */
  newId?: () => string;
}

/** Options shared by every constructor. */
export interface EventOptions {
  /**
   * Actor of the event; each constructor has a sensible default.
   */
  actor?: string;
  /**
   * Started event this one completes.
   * @default null
   */
  parentEventId?: string | null;
  /** Explicit timestamp (ISO 8601 UTC with milliseconds); defaults to the context clock. */
  timestamp?: string;
}

/** What {@linkcode makeEvent} builds: kind and body, with the shared options. */
export interface MakeEventOptions extends EventOptions {
  /** Event kind. */
  kind: EventKind | string;
  /** Kind-specific body. */
  payload: Payload;
}

/**
 * Build an unsealed event of any kind.
 *
 * @param ctx Capture, episode, source, clock and ids.
 * @param options Kind, payload, actor, parent and timestamp.
 * @returns The unsealed event.
 *
 * @example
 * ```ts
 * import { makeEvent } from "./make_event.ts";
 * const ev = makeEvent(
 *   { captureId: "cap_1", episodeId: "ep_1", source: { host: "harness", adapter: "demo", model: null } },
 *   { kind: "annotation", payload: { label: "hello" } },
 * );
 * import { strictEqual } from "node:assert/strict";
 * strictEqual(ev.kind, "annotation");
 * ```
 */
export function makeEvent(
  ctx: EventContext,
  options: MakeEventOptions,
): UnsealedEvent {
  const { kind, payload } = options;
  const now = ctx.now ?? (() => new Date());
  const newId = ctx.newId ?? (() => `evt_${crypto.randomUUID()}`);
  return {
    schema_version: SCHEMA_VERSION,
    event_id: newId(),
    capture_id: ctx.captureId,
    episode_id: ctx.episodeId,
    timestamp: options.timestamp ?? now().toISOString(),
    source: { ...ctx.source },
    actor: options.actor ?? "harness",
    kind,
    parent_event_id: options.parentEventId ?? null,
    payload,
  };
}
