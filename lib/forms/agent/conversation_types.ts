/**
 * The public records of a `Conversation`: what it is bound to,
 * its options, how a user turn ended, its counts and its calls.
 *
 * @module
 */
import type { EventSink } from "../../tool_gateway/event_sink.ts";
import type { ChatModel, ChatTool } from "../../models/chat_types.ts";
import type { ToolRegistry } from "../../runtime/runtime_types.ts";

/** What a conversation is bound to. */
export interface ConversationCapabilities {
  /** The tools, by name. */
  tools: ToolRegistry;
  /** Their schemas as the model should see them (derived from the package when absent). */
  schemas?: ChatTool[];
  /** Instructions for the model (a domain policy, a role). */
  instructions?: string;
}

/** Options of a {@linkcode Conversation}. */
export interface ConversationOptions {
  /** The model. */
  model: ChatModel;
  /** Trace sink: with one, every message, call and model request is an event. */
  sink?: EventSink | null;
  /** Capture of the trace. @default "runtime" */
  captureId?: string;
  /** Episode of the trace. @default "conversation" */
  episodeId?: string;
  /** Most model requests for one user message. @default 16 */
  maxRequestsPerTurn?: number;
  /** Most tokens per model answer (each request's `max_tokens`); the API's default when absent. */
  maxTokens?: number;
  /** Most refused choices for one user message; one more stops the conversation. @default 2 */
  maxRefusalsPerTurn?: number;
  /** Lookup fan-out cap (the package's own when absent). */
  fanout?: number;
}

/** How one user message ended. */
export interface TurnResult {
  /** `replied`: the model answered in words; `stopped`: the package stopped the conversation. */
  status: "replied" | "stopped";
  /** The reply to the user. */
  reply: string | null;
  /** Why it stopped. */
  reason: string | null;
  /** Model requests this turn. */
  requests: number;
}

/** What a conversation did so far. */
export interface ConversationStats {
  /** Model requests. */
  model_requests: number;
  /** Prompt tokens the API reported. */
  prompt_tokens: number;
  /** Completion tokens the API reported. */
  completion_tokens: number;
  /** Tool calls made (lookups, model reads, writes). */
  tool_calls: number;
  /** Lookups the package made. */
  lookups: number;
  /** Lookups shown to the model. */
  lookups_shown: number;
  /** Model reads served from a lookup. */
  served: number;
  /** State-changing calls made. */
  writes: number;
  /** Choices refused (tool or value not allowed, arguments not JSON, unknown tool). */
  refused: number;
}

/** A call the conversation made or refused. */
export interface ConversationCall {
  /** Tool. */
  tool: string;
  /** Arguments (null when the model's were not JSON). */
  args: Record<string, unknown> | null;
  /** `lookup` (package), `model` (asked for and made), `served` (asked for, from a lookup), `refused`. */
  by: "lookup" | "model" | "served" | "refused";
  /** Whether it changed state (made writes only). */
  write: boolean;
  /** Whether the tool succeeded (refused: false). */
  ok: boolean;
  /** Why it was refused. */
  reason?: string;
}

/** Counts of a conversation that has done nothing yet. */
export function emptyStats(): ConversationStats {
  return {
    model_requests: 0,
    prompt_tokens: 0,
    completion_tokens: 0,
    tool_calls: 0,
    lookups: 0,
    lookups_shown: 0,
    served: 0,
    writes: 0,
    refused: 0,
  };
}
