/**
 * What a form is: the {@linkcode Form} interface each form implements in
 * its own folder under `lib/forms/`, and the records that cross it: what a
 * form's compile pipeline gives the packaging step
 * ({@linkcode CompiledForm}), the options and capabilities every form
 * shares (each form adds its own in its folder), and what a replay of one
 * episode measured ({@linkcode ReplayMeasure}). The table of forms is
 * `form_table.ts`; this file knows no form.
 *
 * @module
 */
import type { NormEpisode } from "../lineage/records.ts";
import type { ChatModel } from "../models/chat_types.ts";
import type { EventSink } from "../tool_gateway/event_sink.ts";
import type { ServedPackage } from "../model_gateway/serving.ts";
import type { Candidate } from "../package/candidate.ts";
import type { BehaviorIr, CompiledBehavior } from "../package/ir.ts";
import type { NodeKinds } from "../package/node_kind.ts";
import type { BehaviorPackage } from "../package/package.ts";
import type { Effects } from "../package/tool_effects.ts";
import type { VerificationReport } from "../package/verification.ts";
import type { ToolRegistry } from "../runtime/runtime_types.ts";

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
 * Options of {@linkcode Form.compile} that every form takes; each form
 * reads its own beside them (its folder's options type) and ignores the
 * rest.
 */
export interface FormCompileOptions {
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
}

/** What every form's run is given; each form adds its own capabilities. */
export interface RunCapabilities {
  /** The tools, by name. */
  tools: ToolRegistry;
  /** Judges the run afterwards (recorded as the episode's outcome when tracing). */
  outcome?: () => { success: boolean; [k: string]: unknown } | null;
}

/** Options of a run that every form takes; each form adds its own. */
export interface FormRunOptions {
  /**
   * The chat model the package works with (a conversation form needs one;
   * a form with model leaves answers them with it unless told otherwise).
   */
  chat?: ChatModel | null;
  /** Trace sink. */
  sink?: EventSink | null;
  /** Capture of the trace. */
  captureId?: string;
  /** Episode of the trace. */
  episodeId?: string;
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
 * What replaying one recorded episode through a package measured, the
 * same for every form: the evaluation sums it over held-out episodes.
 * The recorded tools' results stand in for the tools and the agent's own
 * answers for the model.
 */
export interface ReplayMeasure {
  /** Calls the package made itself, exactly as recorded, with no model call. */
  deterministic: number;
  /** State-changing calls the model made through the package's choice (one model call each). */
  choices: number;
  /** The tool of each read the model still asked for, in order. */
  model_reads: string[];
  /** State-changing calls the package made that the episode did not make (or made otherwise). */
  wrong: number;
  /** Why the package stopped the conversation (null: it did not). */
  stop_reason: string | null;
  /** Recorded calls after it stopped. */
  after_stop: number;
  /** Reads the package made that the episode did not make. */
  extra_lookups: number;
  /** Times a read's candidate calls passed its fan-out cap. */
  capped: number;
  /** For every argument of every choice the model made: how many values it could pick from. */
  choice_candidates: number[];
  /** Model calls the package made of its own (residual leaves), beside the agent's turns. */
  model_calls: number;
  /**
   * Per recorded call, in order: whether the model still had to be asked
   * for it (its turn stays); null when the package runs beside every one
   * of the agent's turns (they all stay, and `model_calls` add to them).
   */
  needs_model: boolean[] | null;
}

/**
 * A form of compiled behavior: its node kinds, how it is compiled from
 * episodes, replayed against one, run live, served, explained and
 * described. A form lives in its own folder under `lib/forms/`; a third
 * form is a new folder and a row in `form_table.ts`.
 *
 * @typeParam R What a run returns.
 * @typeParam O Its own compile options (beside {@linkcode FormCompileOptions}).
 * @typeParam C What its run is given.
 * @typeParam X Its run options.
 */
export interface Form<
  R = unknown,
  O extends object = object,
  C extends RunCapabilities = RunCapabilities,
  X extends FormRunOptions = FormRunOptions,
> {
  /** Its name: what `--form` and a run's `form` say. */
  readonly name: string;
  /** Whether running it is a conversation: it needs a chat model and the user's messages. */
  readonly conversation: boolean;
  /** Its node kinds: how a package's loader checks, walks and describes them. */
  readonly kinds: NodeKinds;
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
  compile(
    normalized: NormEpisode[],
    options: FormCompileOptions & O,
  ): CompiledForm;
  /**
   * Replay one episode through a compiled behavior of this form, with the
   * recorded results standing in for the tools: how much of it the form
   * reproduces on its own (the evaluation's measure).
   *
   * @param compiled The compiled behavior (or a package's IR and signatures).
   * @param options The episode and the tool effects.
   * @returns The measure.
   */
  replay(
    compiled: Pick<CompiledBehavior, "ir" | "signatures">,
    options: FormReplayOptions,
  ): ReplayMeasure;
  /**
   * The nodes that read ahead of the model (an agent form's lookups), in
   * order; none for a form without such reads.
   *
   * @param ir An IR of this form.
   * @returns Node ids.
   */
  lookups(ir: BehaviorIr): string[];
  /**
   * The package in the words of the person who recorded the sessions:
   * which steps run without the model, which need it, and why (explain's
   * first part, under its heading).
   *
   * @param pkg A package of this form.
   * @returns The lines.
   */
  explain(pkg: BehaviorPackage): string[];
  /**
   * Run a validated package whose capabilities were checked.
   *
   * @param pkg The package.
   * @param caps Tools and the form's own capabilities.
   * @param options The chat model, the form's own options, tracing.
   * @returns The run.
   */
  run(pkg: BehaviorPackage, caps: C, options: X): Promise<R>;
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
