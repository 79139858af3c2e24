/**
 * The `model.requested` / `model.responded` events of a chat request made
 * by a runtime, with the API's token usage recorded as the hosts' adapters
 * record it (`input_tokens`, `output_tokens`, `total_tokens`).
 *
 * @module
 */
import type { UnsealedEvent } from "../trace/event.ts";
import type { EventContext } from "../trace/make_event.ts";
import { modelRequested, modelResponded } from "../trace/model_events.ts";
import type {
  ChatRequest,
  ChatResponse,
  ChatUsage,
} from "../models/chat_types.ts";

/**
 * Usage in the trace's words.
 *
 * @param u The API's usage.
 * @returns `{input_tokens, output_tokens, total_tokens}`.
 */
export function traceUsage(u: ChatUsage): {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
} {
  return {
    input_tokens: u.prompt_tokens,
    output_tokens: u.completion_tokens,
    total_tokens: u.prompt_tokens + u.completion_tokens,
  };
}

/** What {@linkcode chatRequested} records. */
export interface ChatRequestedFields {
  /** Who asks. */
  nodeId: string;
  /** The model's `provider/model`. */
  modelId: string;
  /** The request. */
  request: ChatRequest;
}

/**
 * `model.requested` for a chat request (its size and tools, not its text).
 *
 * @param ctx Event context.
 * @param fields Who asks, the model, the request.
 * @returns The event.
 */
export function chatRequested(
  ctx: EventContext,
  fields: ChatRequestedFields,
): UnsealedEvent {
  const { nodeId, modelId, request } = fields;
  return modelRequested(ctx, {
    node_id: nodeId,
    request: {
      model: modelId,
      messages: request.messages.length,
      tools: (request.tools ?? []).map((t) => t.name),
    },
  });
}

/** What {@linkcode chatResponded} records. */
export interface ChatRespondedFields {
  /** Who asked. */
  nodeId: string;
  /** The answer. */
  response: ChatResponse;
  /** The request's event. */
  requested: UnsealedEvent;
}

/**
 * `model.responded` for a chat answer, linked to its request.
 *
 * @param ctx Event context.
 * @param fields Who asked, the answer, the request's event.
 * @returns The event.
 */
export function chatResponded(
  ctx: EventContext,
  fields: ChatRespondedFields,
): UnsealedEvent {
  const { nodeId, response: resp, requested } = fields;
  return modelResponded(ctx, {
    node_id: nodeId,
    response: {
      model: resp.model,
      finish_reason: resp.finish_reason,
      tool_calls: resp.tool_calls.map((c) => c.name),
      ...(resp.usage ? { usage: traceUsage(resp.usage) } : {}),
    },
  }, { parentEventId: requested.event_id });
}
