/**
 * What a form is: the {@linkcode Form} interface each form implements (the
 * tree form in `tree/tree_form.ts`, the agent form in `agent/agent_form.ts`)
 * and the records that cross it: what a form's compile pipeline gives the
 * packaging step ({@linkcode CompiledForm}), its options, and what a
 * package is run with. The table of forms is `form_table.ts`.
 *
 * @module
 */
import type { NormEpisode } from "../lineage/records.ts";
import type { ChatModel } from "../models/chat_types.ts";
import type { EventSink } from "../gateway/event_sink.ts";
import type { ServedPackage } from "../model_gateway/serving.ts";
import type { Candidate } from "../package/candidate.ts";
import type { BehaviorIr, CompiledBehavior } from "../package/ir.ts";
import type { BehaviorPackage } from "../package/package.ts";
import type { Effects } from "../package/tool_effects.ts";
import type { VerificationReport } from "../package/verification.ts";
import type { CompilerModel } from "./tree/residualize.ts";
import type { ModelBinding } from "./tree/tree_run_types.ts";
import type {
  ConversationCapabilities,
  TurnResult,
} from "./agent/conversation_types.ts";

/** The forms' names: what `--form` and a run's `form` say. */
export type FormName = "tree" | "agent";

/** What one form's pipeline gives `buildPackage`. */
export interface CompiledForm {
  /** The compiled behavior. */
  compiled: CompiledBehavior;
  /** Its candidates (the evidence behind its nodes). */
  candidates: Candidate[];
  /** Its verification. */
  verification: VerificationReport;
}

/**
 * The agent form's tuning knobs (the tree form ignores them). Unset ones
 * are chosen by cross-validation on the training episodes when `tune` is
 * on, else their defaults.
 */
export interface AgentTuning {
  /** Fan-out cap per lookup node. @default 5 */
  fanout?: number;
  /** Extra lookups per training episode the lookups may cost. @default 3 */
  extraLookupBudget?: number;
  /** Least share of a lookup node's calls the agent made in training. @default 0.25 */
  minYield?: number;
  /** Adjacency share of paired user words. @default 0.8 */
  adjacentShare?: number;
  /** Coverage a contested binding needs to drive a lookup. @default 0.9 */
  speculativeCoverage?: number;
  /**
   * Choose the knobs left unset by cross-validation on the training
   * episodes (`agent/self_tuning.ts`); false: use the defaults.
   * @default true
   */
  tune?: boolean;
}

/**
 * The agent form's tuning knobs of a larger options object, and nothing
 * else (to pass them on).
 *
 * @param o Options holding them.
 * @returns Just the knobs.
 */
export function agentTuning(o: AgentTuning): AgentTuning {
  const {
    fanout,
    extraLookupBudget,
    minYield,
    adjacentShare,
    speculativeCoverage,
    tune,
  } = o;
  return {
    fanout,
    extraLookupBudget,
    minYield,
    adjacentShare,
    speculativeCoverage,
    tune,
  };
}

/** Options of {@linkcode Form.compile}: each form reads the ones it knows. */
export interface FormCompileOptions extends AgentTuning {
  /**
   * Behavior name.
   * @default "behavior"
   */
  name?: string;
  /** Tool effects: `read`, `write`, `destructive`. */
  effects: Effects;
  /**
   * A trial (`compile --form auto`): the caller keeps the form only when it
   * verifies clean, so verification may stop at the first episode that is
   * not; the report is then partial.
   * @default false
   */
  trial?: boolean;
  /** Progress callback (stage, done, total). */
  onProgress?: (stage: string, done: number, total: number) => void;
  /** Tree form: fact key → contract source ids (lifts to E3). */
  contracts?: Record<string, string[]> | null;
  /** Tree form: optional compiler model (wording only). */
  model?: CompilerModel | null;
  /** Tree form: its id. */
  compilerModelId?: string | null;
}

/** What a package is run with. */
export interface PackageCapabilities extends ConversationCapabilities {
  /** Tree form: the run's input (`text`, `task`, stores). */
  input?: Record<string, unknown>;
  /** Tree form: the module's own model binding for residual leaves (`chatBinding` wins when given). */
  model?: ModelBinding | null;
  /** Judges the run afterwards (recorded as the episode's outcome when tracing). */
  outcome?: () => { success: boolean; [k: string]: unknown } | null;
}

/** Options of a run (`runPackage`, {@linkcode Form.run}). */
export interface RunPackageOptions {
  /**
   * The chat model: the agent form's (required for that form); the tree
   * form answers its residual leaves with it (`chatModelBinding`) unless
   * `chatBinding` is given.
   */
  chat?: ChatModel | null;
  /** Tree form: the binding that answers the residual leaves (wins over `chat` and the module's). */
  chatBinding?: ModelBinding | null;
  /** Agent form: the user's messages, in order (a terminal's lines, a script). */
  users?: AsyncIterable<string> | Iterable<string>;
  /** Agent form: called after each user message with the turn's result. */
  onTurn?: (user: string, turn: TurnResult) => void;
  /** Trace sink. */
  sink?: EventSink | null;
  /** Capture of the trace. */
  captureId?: string;
  /** Episode of the trace. */
  episodeId?: string;
  /** Agent form: most model requests per user message. */
  maxRequestsPerTurn?: number;
  /** Most tokens per model answer (`max_tokens` of each request); the API's default when absent. */
  maxTokens?: number;
}

/** What {@linkcode Form.replay} replays, and with what. */
export interface FormReplayOptions {
  /** The episode (a held-out one, or one the form was built from). */
  episode: NormEpisode;
  /** Tool effects (which tools change state). */
  effects: Effects;
}

/**
 * A form of compiled behavior: how it is compiled from episodes, replayed
 * against one, run live, served, and described. A third form is a new
 * folder under `lib/forms/` and a row in `form_table.ts`.
 *
 * @typeParam N Its name.
 * @typeParam R What a run returns.
 * @typeParam P What a replay of one episode returns.
 */
export interface Form<N extends FormName, R, P> {
  /** Its name. */
  readonly name: N;
  /** Whether running it is a conversation: it needs a chat model and the user's messages. */
  readonly conversation: boolean;
  /**
   * Whether an IR is of this form (its root's kind).
   *
   * @param ir A package's IR.
   * @returns True when this form runs it.
   */
  owns(ir: BehaviorIr): boolean;
  /**
   * Build the form from normalized training episodes and verify it.
   *
   * @param normalized Normalized episodes, sorted by id.
   * @param options Name, effects and the form's own options.
   * @returns The compiled form, its candidates and its verification.
   */
  compile(normalized: NormEpisode[], options: FormCompileOptions): CompiledForm;
  /**
   * Replay one episode through a compiled behavior of this form, with the
   * recorded results standing in for the tools: how much of it the form
   * reproduces on its own (the evaluation's measure).
   *
   * @param compiled The compiled behavior (or a package's IR and signatures).
   * @param options The episode and the tool effects.
   * @returns The form's verdicts.
   */
  replay(
    compiled: Pick<CompiledBehavior, "ir" | "signatures">,
    options: FormReplayOptions,
  ): P;
  /**
   * Run a validated package whose capabilities were checked.
   *
   * @param pkg The package.
   * @param caps Tools (and schemas, instructions, input, model, outcome).
   * @param options Chat model, user messages, tracing.
   * @returns The run.
   */
  run(
    pkg: BehaviorPackage,
    caps: PackageCapabilities,
    options: RunPackageOptions,
  ): Promise<R>;
  /**
   * Describe a run for people, a line each.
   *
   * @param result What {@linkcode Form.run} returned.
   * @param pkg The package.
   * @returns The lines.
   */
  describe(result: R, pkg: BehaviorPackage): string[];
  /**
   * Serve a validated package at the model API.
   *
   * @param pkg The package.
   * @returns The served package.
   * @throws {UnservableError} When the form cannot be served there.
   */
  serve(pkg: BehaviorPackage): ServedPackage;
}
