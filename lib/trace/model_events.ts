/**
 * Constructors of model events: a request sent to a model and its response.
 *
 * @module
 */
import type { Payload, UnsealedEvent } from "./event.ts";
import {
  type EventContext,
  type EventOptions,
  makeEvent,
} from "./make_event.ts";

/** Payload of `model.requested`. */
export interface ModelRequestedPayload extends Payload {
  /** Node or component asking. */
  node_id?: string;
  /** What was sent (inputs, messages or a digest of them). */
  request: unknown;
}

/**
 * `model.requested`.
 * @param ctx Event context.
 * @param payload The request.
 * @param options Actor (default `runtime`), parent, timestamp.
 * @returns The unsealed event.
 */
export function modelRequested(
  ctx: EventContext,
  payload: ModelRequestedPayload,
  options: EventOptions = {},
): UnsealedEvent {
  return makeEvent(ctx, {
    kind: "model.requested",
    payload,
    actor: "runtime",
    ...options,
  });
}

/** Payload of `model.responded`. */
export interface ModelRespondedPayload extends Payload {
  /** Node or component that asked. */
  node_id?: string;
  /** What came back. */
  response: unknown;
}

/**
 * `model.responded`. Set `parentEventId` to the request.
 * @param ctx Event context.
 * @param payload The response.
 * @param options Actor (default `model`), parent, timestamp.
 * @returns The unsealed event.
 */
export function modelResponded(
  ctx: EventContext,
  payload: ModelRespondedPayload,
  options: EventOptions = {},
): UnsealedEvent {
  return makeEvent(ctx, {
    kind: "model.responded",
    payload,
    actor: "model",
    ...options,
  });
}
