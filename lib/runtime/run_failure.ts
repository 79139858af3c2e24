/**
 * A run that failed: what it keeps of the error ({@linkcode RunFailure})
 * and the `run.failed` annotation a traced run writes before its
 * `episode.finished`, so a capture says why the run ended (a model API
 * that failed, a tool that cannot be bound) instead of stopping open.
 *
 * @module
 */
import type { UnsealedEvent } from "../trace/event.ts";
import { annotation } from "../trace/episode_events.ts";
import type { EventContext } from "../trace/make_event.ts";

/** The error a run failed on, as its result and its trace keep it. */
export interface RunFailure {
  /** The error's class (`ModelApiError`, `ToolBindingError`, …). */
  name: string;
  /** Its message. */
  message: string;
  /** The node (tree form) or tool it happened at, when known. */
  at?: string;
  /** A model API's HTTP status, when it answered one. */
  status?: number | null;
  /** Requests the model binding sent (1 + retries), when it is a model API error. */
  attempts?: number;
}

/**
 * What a run keeps of an error.
 *
 * @param err What was thrown.
 * @param at The node or tool it happened at.
 * @returns The failure record.
 */
export function runFailure(err: unknown, at?: string): RunFailure {
  const e = err as {
    name?: unknown;
    message?: unknown;
    status?: unknown;
    attempts?: unknown;
  } | null;
  const name = typeof e?.name === "string" ? e.name : "Error";
  const message = typeof e?.message === "string" ? e.message : String(err);
  return {
    name,
    message,
    ...(at ? { at } : {}),
    ...(typeof e?.status === "number" || e?.status === null
      ? { status: e.status as number | null }
      : {}),
    ...(typeof e?.attempts === "number" ? { attempts: e.attempts } : {}),
  };
}

/**
 * The `run.failed` annotation of a traced run.
 *
 * @param ctx Capture, episode and source.
 * @param failure The error.
 * @returns The event.
 */
export function runFailedEvent(
  ctx: EventContext,
  failure: RunFailure,
): UnsealedEvent {
  return annotation(ctx, { type: "run.failed", error: { ...failure } });
}
