/**
 * `compileBehavior` runs the whole pipeline: resolve effects, normalize,
 * then the chosen form's own pipeline (`Form.compile`, from the table of
 * forms in `lib/forms/form_table.ts`), promote, package. Deterministic: the same episodes (and compiler model)
 * give the same bytes; nothing in the package depends on the clock.
 *
 * @module
 */
import type { Episode, NormEpisode } from "../lineage/records.ts";
import { normalizeAll } from "../lineage/normalize.ts";
import { inferFidelity } from "../store/fidelity.ts";
import { withoutDeadEnds } from "../forms/core_steps.ts";
import { EmptyPackageError } from "../package/empty_package.ts";
import { isEmptyIr } from "../forms/validate_package.ts";
import type { Candidate } from "../package/candidate.ts";
import type { Effects } from "../package/tool_effects.ts";
import { type EffectsResolution, resolveEffects } from "./effects.ts";
import type { CompiledBehavior } from "../package/ir.ts";
import type { BehaviorPackage } from "../package/package.ts";
import { buildPackage } from "./build_package.ts";
import type { CompiledForm } from "../forms/form.ts";
import {
  promoteReplayVerified,
  type VerificationReport,
  verifiedClean,
} from "../package/verification.ts";
import {
  FORM_TABLE,
  type FormName,
  type FormOptions,
  type FormTable,
} from "../forms/form_table.ts";
import { type AppliesTo, openingRule } from "../package/applies_to.ts";

/** What {@linkcode compileBehavior} returns. */
export interface CompileResult {
  /** The package. */
  package: BehaviorPackage;
  /**
   * The compiled behavior before packaging (the package's IR, signatures
   * and provenance, with the compiler's stats): for the CLI and the
   * evaluation.
   * @internal
   */
  compiled: CompiledBehavior;
  /** The candidates. */
  candidates: Candidate[];
  /** The verification report. */
  verification: VerificationReport;
  /** The normalized episodes. */
  normalized: NormEpisode[];
  /** The tool effects used and where each came from (print `describeEffects` of it). */
  effects: EffectsResolution;
}

/** Options of {@linkcode compileBehavior}. */
export interface CompileOptions extends FormOptions {
  /**
   * Behavior name.
   * @default "behavior"
   */
  name?: string;
  /** Task family label. */
  taskFamily?: string;
  /** Host tool → logical id. */
  canonical?: Record<string, string> | null;
  /**
   * Tool → effect (`read`, `write`, `destructive`): wins over what the
   * captured episodes say (`resolveEffects`); tools it does not name are
   * resolved from the episodes' toolsets, hosts and names.
   */
  effects?: Effects | null;
  /**
   * Capture fidelity. When absent it is the captures' own, as `capture
   * inspect` reads it from their events (the lowest when there are
   * several); "F3" only for episodes that came already normalized.
   */
  captureFidelity?: string;
  /**
   * Package version.
   * @default "0.1.0"
   */
  version?: string;
  /** Progress callback (stage, done, total). */
  onProgress?: (stage: string, done: number, total: number) => void;
  /**
   * Which form: a name in the table of forms (`tree`: one skeleton of core
   * steps; `agent`: lookups and a choice leaf, for conversations), or
   * `auto`: each form in `AUTO_ORDER` in turn, kept when its replay of
   * every training episode is clean, the last one whatever its replay.
   * @default "auto"
   */
  form?: "auto" | FormName;
  /**
   * The table of forms to build from (the forms in `FORMS`, by default).
   * @internal
   */
  table?: FormTable;
}

/** Why the episodes gave a package that would do nothing. */
function emptyPackage(
  normalized: NormEpisode[],
  training: NormEpisode[],
  verification: VerificationReport,
): EmptyPackageError {
  const n = normalized.length;
  const ok = normalized.filter((e) => e.success === true).length;
  const count = (eps: NormEpisode[]) =>
    eps.reduce((s, e) => s + e.steps.length, 0);
  const all = count(normalized);
  const dead = all - count(training);
  const calls = `${all} tool calls${
    dead ? `, ${dead} of them refused or failed` : ""
  }`;
  const eps = `${n} episode${n === 1 ? "" : "s"}`;
  const left = (verification.dropped ?? []).slice(0, 5);
  return new EmptyPackageError(
    n === 0
      ? "Nothing to compile: the captures hold no episode; capture some sessions first"
      : `Nothing to compile: the ${eps} (${calls}) ${
        n === 1 ? "shows" : "show"
      } no step the package could make itself, so it would leave everything to the model; ${
        n === 1
          ? "one session shows what was done once, not what repeats: capture more sessions of the same task"
          : "capture more sessions of the same task"
      }${
        ok === 0
          ? ` and mark the ones that succeeded ("ingest.ts capture outcome <capture> <episode> --success"): the tree form is built from successful episodes only`
          : ""
      }${
        left.length
          ? `. Left out: ${left.map((d) => `${d.node} (${d.why})`).join("; ")}`
          : ""
      }`,
  );
}

/**
 * Why a package must not be served: its replay of its own training
 * sessions was not clean (a served package that cannot reproduce what it
 * learned from would refuse or misserve correct calls); null when clean.
 */
function servingProblem(v: VerificationReport): string | null {
  if (verifiedClean(v)) return null;
  if (!v.structural_ok) {
    return `its structure check failed (${
      v.structural_problems.slice(0, 2).join("; ")
    })`;
  }
  const first = v.problems[0];
  return `its replay of its own ${v.episodes_replayed} training sessions is not clean: ${v.replay_passed}/${v.replay_checks} checks passed, ${v.episodes_clean} sessions clean${
    first ? ` (first problem: ${first.slice(0, 240)})` : ""
  }`;
}

/**
 * The rule of which conversations the package applies to when served:
 * from the openings of the training sessions it learned from (those with
 * a step, not marked failed).
 */
function appliesToOf(training: NormEpisode[]): AppliesTo {
  const learned = training.filter((e) =>
    e.steps.length > 0 && e.success !== false
  );
  return openingRule(learned.map((e) => {
    const text = (e.steps[0].state_before.input as { text?: unknown } | null)
      ?.text;
    return typeof text === "string" ? text : null;
  }));
}

const FIDELITY_ORDER = ["F0", "F1", "F2", "F3", "F4"];

/**
 * The fidelity the captured episodes show (`inferFidelity` over each
 * capture's events, the lowest of the captures), or undefined when there
 * are none.
 */
function capturesFidelity(raw: Episode[]): string | undefined {
  const byCapture = new Map<string, Episode[]>();
  for (const e of raw) {
    byCapture.set(e.capture_id, [...byCapture.get(e.capture_id) ?? [], e]);
  }
  let lowest: string | undefined;
  for (const eps of byCapture.values()) {
    const level = inferFidelity(eps.flatMap((e) => e.events));
    if (
      lowest === undefined ||
      FIDELITY_ORDER.indexOf(level) < FIDELITY_ORDER.indexOf(lowest)
    ) lowest = level;
  }
  return lowest;
}

/**
 * The whole pipeline: resolve effects, normalize, build and verify the
 * form, promote, package. The form is chosen before anything is built:
 * `agent` builds no tree; `tree` builds only the tree; `auto` tries the
 * forms in `AUTO_ORDER` (the tree, then the agent form) and keeps the first
 * that verifies clean; a trial's verification stops at the first episode
 * that does not replay clean.
 * Tool effects come from `options.effects` and, for tools it does not name,
 * from what the captured episodes say (`resolveEffects`); already normalized
 * episodes carry no toolsets or hosts, so for them only `options.effects`
 * counts.
 *
 * @param episodes Captured episodes (or already normalized ones).
 * @param options Name, maps, contracts, effects, model, fidelity, version.
 * @returns The result.
 * @throws {TypeError} When `options.effects` gives an effect other than `read`, `write` or `destructive`.
 * @throws {EmptyPackageError} When the package would do nothing (no tool call, no model leaf), with the reason.
 */
export function compileBehavior(
  episodes: (Episode | NormEpisode)[],
  options: CompileOptions = {},
): CompileResult {
  const progress = options.onProgress ?? (() => {});
  const raw = episodes.filter((e): e is Episode => "events" in e);
  const resolution = resolveEffects(raw, {
    override: options.effects,
    canonical: options.canonical,
  });
  const effects = resolution.effects;
  const pre = episodes.filter((e): e is NormEpisode => "steps" in e);
  progress("normalize", 0, episodes.length);
  const normalized = [
    ...pre,
    ...normalizeAll(raw, { canonical: options.canonical }),
  ]
    .sort((a, b) =>
      a.episode_id < b.episode_id ? -1 : a.episode_id > b.episode_id ? 1 : 0
    );
  progress("normalize", episodes.length, episodes.length);
  // Refused and failed calls are evidence about the tools (effects,
  // errors), never steps the package should reproduce.
  const training = normalized.map(withoutDeadEnds);
  const table = options.table ?? FORM_TABLE;
  const form = options.form ?? "auto";
  const tries = form === "auto" ? table.forms : [table.formNamed(form)];
  let built: CompiledForm | undefined;
  for (const [i, f] of tries.entries()) {
    const trial = i < tries.length - 1;
    // Each form reads its own options from the caller's and ignores the rest.
    built = f.compile(training, {
      ...options,
      name: options.name,
      effects,
      trial,
      onProgress: progress,
    });
    // A trial that does nothing proves nothing by replaying clean.
    if (
      !trial ||
      (verifiedClean(built.verification) &&
        !isEmptyIr(built.compiled.ir, table))
    ) break;
  }
  // The loop ran at least once: `tries` is never empty.
  const chosen = built!;
  const { compiled, candidates, verification } = chosen;
  if (isEmptyIr(compiled.ir, table)) {
    throw emptyPackage(normalized, training, verification);
  }
  const promoted = promoteReplayVerified(compiled, verification);
  const notServable = servingProblem(verification);
  const pkg = buildPackage(chosen, {
    name: options.name ?? "behavior",
    episodes: normalized,
    taskFamily: options.taskFamily,
    effects,
    effectsSource: resolution.source,
    compilerModelId: options.compilerModelId ?? options.model?.id ?? null,
    captureFidelity: options.captureFidelity ?? capturesFidelity(raw),
    version: options.version,
    promoted,
    notServable,
    appliesTo: appliesToOf(training),
  });
  progress("package", 1, 1);
  return {
    package: pkg,
    compiled,
    candidates,
    verification,
    normalized,
    effects: resolution,
  };
}
