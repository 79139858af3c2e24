/**
 * {@linkcode runPackage}: run any compiled package, whichever its form. A
 * tree package (`BehaviorRuntime`) runs once on an input, its residual
 * leaves answered by a model binding; an agent-form package runs a
 * conversation (`Conversation`) over a stream of user messages with a chat
 * model. The form is the package's root kind, never a flag.
 *
 * @module
 */
import type { EventSink } from "../gateway/event_sink.ts";
import type { BehaviorPackage } from "../package/package.ts";
import type { ChatModel } from "../models/chat_types.ts";
import { BehaviorRuntime } from "./runtime.ts";
import {
  Conversation,
  type ConversationCall,
  type ConversationCapabilities,
  type ConversationStats,
} from "./conversation.ts";
import {
  MissingCapabilityError,
  type ModelBinding,
  type RunResult,
} from "./runtime_types.ts";
import { isTool } from "./bind_args.ts";
import { irTools } from "../package/load_package.ts";

/** What a package is run with. */
export interface PackageCapabilities extends ConversationCapabilities {
  /** Tree form: the run's input (`text`, `task`, stores). */
  input?: Record<string, unknown>;
  /** Tree form: the module's own model binding for residual leaves (`chatBinding` wins when given). */
  model?: ModelBinding | null;
  /** Judges the run afterwards (recorded as the episode's outcome when tracing). */
  outcome?: () => { success: boolean; [k: string]: unknown } | null;
}

/** Options of {@linkcode runPackage}. */
export interface RunPackageOptions {
  /** Agent form: the chat model (required for that form). */
  chat?: ChatModel | null;
  /** Tree form: a binding made from a chat model (`--model`): it answers the residual leaves. */
  chatBinding?: ModelBinding | null;
  /** Agent form: the user's messages, in order (a terminal's lines, a script). */
  users?: AsyncIterable<string> | Iterable<string>;
  /** Agent form: called after each user message with the turn's result. */
  onTurn?: (
    user: string,
    turn: Awaited<ReturnType<Conversation["user"]>>,
  ) => void;
  /** Trace sink. */
  sink?: EventSink | null;
  /** Capture of the trace. */
  captureId?: string;
  /** Episode of the trace. */
  episodeId?: string;
  /** Agent form: most model requests per user message. */
  maxRequestsPerTurn?: number;
}

/** A conversation's result. */
export interface ConversationRun {
  /** `completed` (every user message answered), `stopped` (the package stopped). */
  status: "completed" | "stopped";
  /** Why it stopped. */
  reason: string | null;
  /** User messages taken. */
  turns: number;
  /** The replies, in order. */
  replies: string[];
  /** Counts. */
  stats: ConversationStats;
  /** Calls in order. */
  calls: ConversationCall[];
}

/** What {@linkcode runPackage} did. */
export type PackageRun =
  | { form: "tree"; result: RunResult }
  | { form: "agent"; result: ConversationRun };

/** A package's form: `agent` when its root is an agent node, else `tree`. */
export function packageForm(pkg: BehaviorPackage): "tree" | "agent" {
  return pkg.ir.nodes[pkg.ir.root]?.kind === "agent" ? "agent" : "tree";
}

/**
 * Refuse, before anything runs, a package that calls a tool the
 * capabilities do not bind: every tool its manifest lists and every tool
 * its IR calls (`irTools`), so a package whose IR names a tool its
 * manifest leaves out is caught here too when it was never validated.
 *
 * @param pkg The package.
 * @param tools The bound tools.
 * @throws {MissingCapabilityError} Naming every unbound tool.
 */
export function checkCapabilities(
  pkg: BehaviorPackage,
  tools: PackageCapabilities["tools"],
): void {
  const needed = new Set(pkg.manifest.required_capabilities);
  for (const { tool } of irTools(pkg.ir)) needed.add(tool);
  const missing = [...needed].filter((t) =>
    !Object.hasOwn(tools, t) || !isTool(tools[t])
  );
  if (missing.length) throw new MissingCapabilityError(missing);
}

/**
 * Run a package in its form.
 *
 * @param pkg A validated package.
 * @param caps Tools (and schemas, instructions, input, model, outcome).
 * @param options The chat model and the user's messages (agent form), tracing.
 * @returns The run.
 * @throws {TypeError} An agent-form package with no chat model.
 * @throws {MissingCapabilityError} A tool or model the package needs is not bound.
 */
export async function runPackage(
  pkg: BehaviorPackage,
  caps: PackageCapabilities,
  options: RunPackageOptions = {},
): Promise<PackageRun> {
  checkCapabilities(pkg, caps.tools);
  if (packageForm(pkg) === "tree") {
    const runtime = new BehaviorRuntime(pkg, {
      tools: caps.tools,
      model: options.chatBinding ?? caps.model ?? null,
    });
    const result = await runtime.run(caps.input ?? {}, {
      sink: options.sink,
      captureId: options.captureId,
      episodeId: options.episodeId,
      outcome: caps.outcome,
    });
    return { form: "tree", result };
  }
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
  });
  const run: ConversationRun = {
    status: "completed",
    reason: null,
    turns: 0,
    replies: [],
    stats: conv.stats,
    calls: [],
  };
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
  conv.finish(caps.outcome?.() ?? null, run.status);
  run.stats = conv.stats;
  run.calls = [...conv.calls];
  return { form: "agent", result: run };
}
