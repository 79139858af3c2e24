/**
 * Constructors of a compiled behavior's own events: entering and leaving an
 * IR node, and writing its blackboard.
 *
 * @module
 */
import type { Payload, UnsealedEvent } from "./event.ts";
import {
  type EventContext,
  type EventOptions,
  makeEvent,
} from "./make_event.ts";

/** Payload of `node.enter` / `node.exit`. */
export interface NodePayload extends Payload {
  /** IR node id. */
  node_id: string;
  /** IR node kind. */
  node_kind: string;
  /** On exit: `success`, `failure`, `fallback`, … */
  status?: string;
}

/**
 * `node.enter`.
 * @param ctx Event context.
 * @param payload Node identity.
 * @param options Actor (default `runtime`), parent, timestamp.
 * @returns The unsealed event.
 */
export function nodeEnter(
  ctx: EventContext,
  payload: NodePayload,
  options: EventOptions = {},
): UnsealedEvent {
  return makeEvent(ctx, {
    kind: "node.enter",
    payload,
    actor: "runtime",
    ...options,
  });
}

/**
 * `node.exit`.
 * @param ctx Event context.
 * @param payload Node identity and status.
 * @param options Actor (default `runtime`), parent (the enter event), timestamp.
 * @returns The unsealed event.
 */
export function nodeExit(
  ctx: EventContext,
  payload: NodePayload,
  options: EventOptions = {},
): UnsealedEvent {
  return makeEvent(ctx, {
    kind: "node.exit",
    payload,
    actor: "runtime",
    ...options,
  });
}

/** Payload of `blackboard.write`. */
export interface BlackboardWritePayload extends Payload {
  /** Blackboard key (a store name). */
  key: string;
  /** Value written. */
  value: unknown;
}

/**
 * `blackboard.write`.
 * @param ctx Event context.
 * @param payload Key and value.
 * @param options Actor (default `runtime`), parent, timestamp.
 * @returns The unsealed event.
 */
export function blackboardWrite(
  ctx: EventContext,
  payload: BlackboardWritePayload,
  options: EventOptions = {},
): UnsealedEvent {
  return makeEvent(ctx, {
    kind: "blackboard.write",
    payload,
    actor: "runtime",
    ...options,
  });
}
