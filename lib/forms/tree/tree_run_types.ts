/**
 * The tree form's run types: the model binding its residual leaves are
 * answered by, what one run of `BehaviorRuntime` returns, and its options.
 * A run's steps are the tree engine's own (`RunStep`, `tree_requests.ts`).
 *
 * @module
 */
import type { EventSink } from "../../tool_gateway/event_sink.ts";
import type { Signature } from "../../package/ir.ts";
import type { RunFailure } from "../../runtime/run_failure.ts";
import type { RunStep, TreeModelCall } from "./tree_requests.ts";

/** One step of a react leaf's loop. */
export type ReactDecision =
  | { tool: string; arguments: Record<string, unknown> }
  | { done: true; result?: unknown };

/** The model binding for residual leaves. */
export interface ModelBinding {
  /** Model id, recorded in events. */
  id?: string;
  /** Token usage of the last answer, when the binding talks to a model API (recorded in `model.responded`). */
  readonly lastUsage?:
    | { prompt_tokens: number; completion_tokens: number }
    | null;
  /**
   * Fill a predict leaf's typed outputs.
   * @param signature The leaf's signature.
   * @param inputs Its inputs, resolved.
   */
  predict(
    signature: Signature,
    inputs: Record<string, unknown>,
  ): Record<string, unknown> | Promise<Record<string, unknown>>;
  /**
   * Choose the next tool call of a react leaf, or finish.
   * @param signature The leaf's signature.
   * @param context Tools, history so far, inputs.
   */
  react?(
    signature: Signature,
    context: {
      tools: string[];
      history: unknown[];
      inputs: Record<string, unknown>;
    },
  ): ReactDecision | Promise<ReactDecision>;
}

/** The result of a run. */
export interface RunResult {
  /** `completed`, `stopped` (a fallback stop) or `failed` (a tool error with no recovery). */
  status: "completed" | "stopped" | "failed";
  /** Why it stopped or failed. */
  reason: string | null;
  /** Stores and variables written. */
  outputs: Record<string, unknown>;
  /** Steps in order. */
  steps: RunStep[];
  /** Leaves that called the model. */
  model_calls: TreeModelCall[];
  /** The error a failed run ended on (a model API that failed, a tool that cannot be bound); null otherwise. */
  error: RunFailure | null;
  /** Events emitted (0 without a sink). */
  events: number;
}

/** Options of {@linkcode BehaviorRuntime.run}. */
export interface RunOptions {
  /** Trace sink: with one, the run emits canonical events. */
  sink?: EventSink | null;
  /** Capture of the trace. */
  captureId?: string;
  /** Episode of the trace. */
  episodeId?: string;
  /** Reported after the run as `annotation episode.outcome` (when tracing). */
  outcome?: () => { success: boolean; [k: string]: unknown } | null;
}
