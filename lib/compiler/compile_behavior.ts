/**
 * `compileBehavior` runs the whole pipeline — normalize, consolidate,
 * staticize (tree or agent form), verify, package. Deterministic: the
 * same episodes (and compiler model) give the same bytes; nothing in the
 * package depends on the clock.
 *
 * @module
 */
import type { Episode, NormEpisode } from "../lineage/records.ts";
import { normalizeAll } from "../lineage/normalize.ts";
import type { Candidate } from "./core/candidate.ts";
import type { Effects } from "./core/core_steps.ts";
import { type EffectsResolution, resolveEffects } from "./core/effects.ts";
import type { CompiledBehavior } from "./core/ir.ts";
import { type BehaviorPackage, buildPackage } from "./core/package.ts";
import {
  checkStructure,
  promoteReplayVerified,
  type VerificationReport,
} from "./core/verification.ts";
import { consolidate } from "./tree/consolidate.ts";
import { extractFacts } from "./tree/facts.ts";
import type { CompilerModel } from "./tree/residualize.ts";
import { staticize } from "./tree/staticize.ts";
import { verify } from "./tree/verify.ts";
import { buildAgentForm } from "./agent/agent_form.ts";
import { agentVerification } from "./agent/agent_verify.ts";

/** What {@linkcode compileBehavior} returns. */
export interface CompileResult {
  /** The package. */
  package: BehaviorPackage;
  /** The compiled behavior. */
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
export interface CompileOptions {
  /**
   * Behavior name.
   * @default "behavior"
   */
  name?: string;
  /** Task family label. */
  taskFamily?: string;
  /** Host tool → logical id. */
  canonical?: Record<string, string> | null;
  /** Fact key → contract source ids (lifts to E3). */
  contracts?: Record<string, string[]> | null;
  /**
   * Tool → effect (`read`, `write`, `destructive`): wins over what the
   * captured episodes say (`resolveEffects`); tools it does not name are
   * resolved from the episodes' toolsets, hosts and names.
   */
  effects?: Effects | null;
  /** Optional compiler model (wording only). */
  model?: CompilerModel | null;
  /** Its id. */
  compilerModelId?: string | null;
  /**
   * Capture fidelity.
   * @default "F3"
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
   * Which form: `tree` (one skeleton of core steps), `agent` (lookups and
   * a choice leaf, for conversations), or `auto`: the tree when its replay
   * of every training episode is clean, else the agent form.
   * @default "auto"
   */
  form?: "auto" | "tree" | "agent";
  /** Agent form: fan-out cap per lookup node. @default 5 */
  fanout?: number;
  /** Agent form: extra lookups per training episode the lookups may cost. @default 3 */
  extraLookupBudget?: number;
  /** Agent form: least share of a lookup node's calls the agent made in training. @default 0.25 */
  minYield?: number;
  /** Agent form: adjacency share of paired user words. @default 0.8 */
  adjacentShare?: number;
  /** Agent form: coverage a contested binding needs to drive a lookup. @default 0.9 */
  speculativeCoverage?: number;
}

/**
 * The whole pipeline: normalize, consolidate, staticize, verify, package.
 * Tool effects come from `options.effects` and, for tools it does not name,
 * from what the captured episodes say (`resolveEffects`); already normalized
 * episodes carry no toolsets or hosts, so for them only `options.effects`
 * counts.
 *
 * @param episodes Captured episodes (or already normalized ones).
 * @param options Name, maps, contracts, effects, model, fidelity, version.
 * @returns The result.
 * @throws {TypeError} When `options.effects` gives an effect other than `read`, `write` or `destructive`.
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
  const facts = normalized.flatMap((e, i) => {
    if (i % 500 === 0) progress("facts", i, normalized.length);
    return extractFacts(e, { effects });
  });
  progress("consolidate", 0, 1);
  const candidates = consolidate(normalized, {
    contracts: options.contracts,
    effects,
    facts,
  });
  progress("staticize", 0, 1);
  const compiled = staticize(normalized, candidates, {
    name: options.name,
    model: options.model,
    compilerModelId: options.compilerModelId,
    effects,
  });
  progress("verify", 0, 1);
  let verification = verify(compiled, normalized, {
    requiredCapabilities: new Set(compiled.required_capabilities),
    effects,
  });
  const form = options.form ?? "auto";
  const treeClean = verification.structural_ok &&
    verification.replay_checks > 0 &&
    verification.replay_passed === verification.replay_checks;
  let chosen: CompiledBehavior = compiled;
  let chosenCandidates = candidates;
  if (form === "agent" || (form === "auto" && !treeClean)) {
    progress("agent form", 0, 1);
    const agent = buildAgentForm(normalized, {
      name: options.name,
      effects,
      fanout: options.fanout,
      extraLookupBudget: options.extraLookupBudget,
      minYield: options.minYield,
      adjacentShare: options.adjacentShare,
      speculativeCoverage: options.speculativeCoverage,
    });
    chosen = agent.compiled;
    chosenCandidates = agent.candidates;
    verification = agentVerification(
      agent.replays,
      checkStructure(chosen, new Set(chosen.required_capabilities)),
    );
  }
  const promoted = promoteReplayVerified(chosen, verification);
  const pkg = buildPackage(chosen, verification, chosenCandidates, normalized, {
    name: options.name ?? "behavior",
    taskFamily: options.taskFamily,
    effects,
    effectsSource: resolution.source,
    compilerModelId: options.compilerModelId ?? options.model?.id ?? null,
    captureFidelity: options.captureFidelity,
    version: options.version,
    promoted,
  });
  progress("package", 1, 1);
  return {
    package: pkg,
    compiled: chosen,
    candidates: chosenCandidates,
    verification,
    normalized,
    effects: resolution,
  };
}
