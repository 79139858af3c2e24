/**
 * Constructors of what an episode says besides its actions: that it started
 * and finished, the user's and assistant's messages, and annotations (facts
 * about the run: `episode.outcome`, `capture.started`, …).
 *
 * @module
 */
import type { Payload, UnsealedEvent } from "./event.ts";
import {
  type EventContext,
  type EventOptions,
  makeEvent,
} from "./make_event.ts";

/** Payload of `episode.started`. */
export interface EpisodeStartedPayload extends Payload {
  /** Why or how the episode started (host `source`, e.g. `startup`, `resume`). */
  reason?: string;
  /** Free task description or input. */
  task?: unknown;
}

/**
 * `episode.started`.
 * @param ctx Event context.
 * @param payload Start details.
 * @param options Actor (default `host`), parent, timestamp.
 * @returns The unsealed event.
 */
export function episodeStarted(
  ctx: EventContext,
  payload: EpisodeStartedPayload = {},
  options: EventOptions = {},
): UnsealedEvent {
  return makeEvent(ctx, {
    kind: "episode.started",
    payload,
    actor: "host",
    ...options,
  });
}

/** Payload of `episode.finished`. */
export interface EpisodeFinishedPayload extends Payload {
  /** How it ended: host `reason`, `completed`, `stopped`, … */
  reason?: string;
  /** Calls started but never completed in the episode, when the producer knows them. */
  incomplete_calls?: string[];
}

/**
 * `episode.finished`.
 * @param ctx Event context.
 * @param payload End details.
 * @param options Actor (default `host`), parent, timestamp.
 * @returns The unsealed event.
 */
export function episodeFinished(
  ctx: EventContext,
  payload: EpisodeFinishedPayload = {},
  options: EventOptions = {},
): UnsealedEvent {
  return makeEvent(ctx, {
    kind: "episode.finished",
    payload,
    actor: "host",
    ...options,
  });
}

/** Payload of `annotation`. */
export interface AnnotationPayload extends Payload {
  /** What the annotation says, as a dotted type: `session.error`, `episode.outcome`, … */
  type: string;
}

/**
 * `annotation`: a fact about the run that is not an action.
 * @param ctx Event context.
 * @param payload The annotation.
 * @param options Actor (default `harness`), parent, timestamp.
 * @returns The unsealed event.
 */
export function annotation(
  ctx: EventContext,
  payload: AnnotationPayload,
  options: EventOptions = {},
): UnsealedEvent {
  return makeEvent(ctx, { kind: "annotation", payload, ...options });
}

/** Payload of `message`. */
export interface MessagePayload extends Payload {
  /** `user`, `assistant` or `system`. */
  role: string;
  /** The text. */
  text: string;
}

/**
 * `message`: a user or assistant message.
 * @param ctx Event context.
 * @param payload Role and text.
 * @param options Actor (default: the role when it is `user`, else `model`), parent, timestamp.
 * @returns The unsealed event.
 */
export function message(
  ctx: EventContext,
  payload: MessagePayload,
  options: EventOptions = {},
): UnsealedEvent {
  return makeEvent(ctx, {
    kind: "message",
    payload,
    actor: payload.role === "user" ? "user" : "model",
    ...options,
  });
}
