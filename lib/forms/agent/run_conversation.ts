/**
 * {@linkcode runConversation}: an agent-form package run as a conversation
 * over a stream of user messages (`Conversation`, one message at a time),
 * to the end of the stream or until the package stops it.
 *
 * @module
 */
import type { BehaviorPackage } from "../../package/package.ts";
import type { FormRunOptions, RunCapabilities } from "../form.ts";
import { type RunFailure, runFailure } from "../../runtime/run_failure.ts";
import { Conversation } from "./conversation.ts";
import type {
  ConversationCall,
  ConversationCapabilities,
  ConversationStats,
  TurnResult,
} from "./conversation_types.ts";

/** What an agent-form package's run is given. */
export interface AgentCapabilities
  extends RunCapabilities, ConversationCapabilities {}

/** The agent form's own run options. */
export interface AgentRunOptions extends FormRunOptions {
  /** The user's messages, in order (a terminal's lines, a script). */
  users?: AsyncIterable<string> | Iterable<string>;
  /** Called after each user message with the turn's result. */
  onTurn?: (user: string, turn: TurnResult) => void;
  /** Most model requests per user message. */
  maxRequestsPerTurn?: number;
}

/** A conversation's result. */
export interface ConversationRun {
  /**
   * `completed` (every user message answered), `stopped` (the package
   * stopped it), `failed` (an error ended it: the model API failed, a
   * tool cannot be bound).
   */
  status: "completed" | "stopped" | "failed";
  /** Why it stopped or failed. */
  reason: string | null;
  /** The error a failed conversation ended on (null otherwise). */
  error: RunFailure | null;
  /**
   * Calls the package refused (a state-changing choice outside its
   * candidates, a tool not offered): a `completed` run with refusals did
   * not do all the model asked, whatever its replies say.
   */
  refused: number;
  /** User messages taken. */
  turns: number;
  /** The replies, in order. */
  replies: string[];
  /** Counts. */
  stats: ConversationStats;
  /** Calls in order. */
  calls: ConversationCall[];
}

/**
 * Run an agent-form package as a conversation over `options.users`.
 *
 * @param pkg A validated agent-form package.
 * @param caps Tools, schemas, instructions, outcome.
 * @param options The chat model, the user's messages, tracing.
 * @returns The conversation's result.
 * @throws {TypeError} No chat model.
 */
export async function runConversation(
  pkg: BehaviorPackage,
  caps: AgentCapabilities,
  options: AgentRunOptions = {},
): Promise<ConversationRun> {
  if (!options.chat) {
    throw new TypeError(
      `${pkg.manifest.name} is an agent-form package: it runs a conversation and needs a chat model (--model openai/MODEL or anthropic/MODEL)`,
    );
  }
  const conv = new Conversation(pkg, caps, {
    model: options.chat,
    sink: options.sink,
    captureId: options.captureId,
    episodeId: options.episodeId,
    maxRequestsPerTurn: options.maxRequestsPerTurn,
    maxTokens: options.maxTokens,
  });
  const run: ConversationRun = {
    status: "completed",
    reason: null,
    error: null,
    refused: 0,
    turns: 0,
    replies: [],
    stats: conv.stats,
    calls: [],
  };
  try {
    for await (const text of options.users ?? []) {
      run.turns++;
      const turn = await conv.user(text);
      options.onTurn?.(text, turn);
      if (turn.status === "stopped") {
        run.status = "stopped";
        run.reason = turn.reason;
        break;
      }
      run.replies.push(turn.reply ?? "");
    }
  } catch (err) {
    // A model API that failed, a tool that cannot be bound: the
    // conversation ends here, with the error in its result and its trace.
    run.status = "failed";
    run.error = runFailure(err);
    run.reason = run.error.message;
  }
  conv.finish(caps.outcome?.() ?? null, run.status, run.error);
  run.stats = conv.stats;
  run.refused = run.stats.refused;
  run.calls = [...conv.calls];
  return run;
}
