/**
 * {@linkcode EpisodeTrace}: the episode frame a runtime writes around what
 * it does when a sink is attached — `episode.started` once, the error a
 * failed run ended on as a `run.failed` annotation, the outcome as an
 * `episode.outcome` annotation, `episode.finished` once. Without a sink
 * it emits nothing.
 *
 * @module
 */
import type { EventSink } from "../tool_gateway/event_sink.ts";
import type { UnsealedEvent } from "../trace/event.ts";
import {
  annotation,
  episodeFinished,
  episodeStarted,
} from "../trace/episode_events.ts";
import type { EventContext } from "../trace/make_event.ts";
import { runFailedEvent, type RunFailure } from "./run_failure.ts";

/** The episode frame of one traced run. */
export class EpisodeTrace {
  /** Where events go, with their context (null: not traced). */
  readonly target: { sink: EventSink; ctx: EventContext } | null;
  readonly #started: Record<string, unknown>;
  #begun = false;
  #ended = false;

  /**
   * Create an `EpisodeTrace`.
   *
   * @param sink The sink, or null.
   * @param ctx Capture, episode and source of the events.
   * @param started What `episode.started` says.
   */
  constructor(
    sink: EventSink | null,
    ctx: EventContext,
    started: Record<string, unknown>,
  ) {
    this.target = sink ? { sink, ctx } : null;
    this.#started = started;
  }

  /**
   * Emit an event (after `episode.started`).
   *
   * @param ev The event.
   */
  emit(ev: UnsealedEvent): void {
    if (!this.target) return;
    this.start();
    this.target.sink.emit(ev);
  }

  /** `episode.started`, once. */
  start(): void {
    if (!this.target || this.#begun) return;
    this.#begun = true;
    this.target.sink.emit(
      episodeStarted(this.target.ctx, this.#started, { actor: "runtime" }),
    );
  }

  /**
   * The error (when the run failed), the outcome (when known) and
   * `episode.finished`, once.
   *
   * @param outcome The judged outcome, or null.
   * @param reason How it ended.
   * @param failure The error a failed run ended on.
   */
  finish(
    outcome: { success: boolean; [k: string]: unknown } | null,
    reason: string,
    failure?: RunFailure | null,
  ): void {
    if (!this.target || this.#ended) return;
    this.start();
    this.#ended = true;
    const { sink, ctx } = this.target;
    if (failure) sink.emit(runFailedEvent(ctx, failure));
    if (outcome) {
      const { success, ...rest } = outcome;
      sink.emit(
        annotation(ctx, { type: "episode.outcome", success, outcome: rest }),
      );
    }
    sink.emit(
      episodeFinished(ctx, {
        reason,
        ...(failure ? { stop_reason: failure.message } : {}),
      }, { actor: "runtime" }),
    );
  }
}
