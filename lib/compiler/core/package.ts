/**
 * Packaging: `buildPackage` assembles one portable, versioned JSON document
 * (`harness.package.v1`), and `compileBehavior` runs the whole pipeline —
 * normalize, consolidate, staticize, verify, package. Deterministic: the
 * same episodes (and compiler model) give the same bytes; nothing in the
 * package depends on the clock.
 *
 * @module
 */
import { canonicalJson } from "../../trace/canonical_json.ts";
import { sha256Digest } from "../../trace/hash.ts";
import type { Episode, NormEpisode } from "../../lineage/records.ts";
import { normalizeAll } from "../../lineage/normalize.ts";
import { type Candidate, consolidate } from "../tree/consolidate.ts";
import { extractFacts } from "../tree/facts.ts";
import type { Effects } from "./core_steps.ts";
import {
  type EffectSource,
  type EffectsResolution,
  resolveEffects,
} from "./effects.ts";
import type {
  BehaviorIr,
  CompiledBehavior,
  NodeProvenance,
  Signature,
} from "./ir.ts";
import type { CompilerModel } from "../tree/residualize.ts";
import { staticize } from "../tree/staticize.ts";
import { buildAgentForm } from "../agent/agent_form.ts";
import { agentVerification } from "../agent/agent_verify.ts";
import {
  checkStructure,
  promoteReplayVerified,
  type VerificationReport,
  verify,
} from "./verification.ts";

/** Version of the package format. */
export const PACKAGE_VERSION = "harness.package.v1";

/** The portable behavior package. */
export interface BehaviorPackage {
  /** `harness.package.v1`. */
  schema_version: string;
  /** What it is and what it needs. */
  manifest: {
    name: string;
    version: string;
    task_family: string;
    capture_fidelity: string;
    compiler_model_id: string | null;
    required_capabilities: string[];
    effects: Effects;
    /**
     * Where each tool's effect came from (`override`, `annotation`,
     * `schema`, `domain`, `host`, `inferred`, `unknown`); always written,
     * absent from packages made before it existed.
     */
    effects_source?: Record<string, EffectSource>;
    episodes: number;
    promoted_to_e4: boolean;
  };
  /** The behavior IR. */
  ir: BehaviorIr;
  /** Residual leaf signatures. */
  signatures: Record<string, Signature>;
  /** Why each node exists. */
  provenance: NodeProvenance[];
  /** The candidates (episode lists cut to 10 ids). */
  candidates: Candidate[];
  /** The verification report. */
  verification: VerificationReport;
  /** Evidence: each source episode's digest, and a digest over them. */
  sources: {
    digest: string;
    episodes: { episode_id: string; source_digest: string | null }[];
  };
  /** `sha256:` over the canonical package without this field. */
  digest: string;
}

/** Options of {@linkcode buildPackage}. */
export interface BuildPackageOptions {
  /** Package name. */
  name: string;
  /** Task family label. */
  taskFamily?: string;
  /** Tool effects. */
  effects?: Effects | null;
  /** Where each tool's effect came from. */
  effectsSource?: Record<string, EffectSource> | null;
  /** Compiler model id. */
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
  /** Whether replay promoted the nodes to E4. */
  promoted?: boolean;
}

/**
 * Assemble the package document.
 *
 * @param compiled The compiled behavior.
 * @param report Its verification.
 * @param candidates The candidates.
 * @param norm The normalized episodes (for source digests).
 * @param options Name, family, effects, model, fidelity, version.
 * @returns The package.
 */
export function buildPackage(
  compiled: CompiledBehavior,
  report: VerificationReport,
  candidates: Candidate[],
  norm: NormEpisode[],
  options: BuildPackageOptions,
): BehaviorPackage {
  const episodes = norm.map((e) => ({
    episode_id: e.episode_id,
    source_digest: e.source_digest,
  }))
    .sort((a, b) => a.episode_id < b.episode_id ? -1 : 1);
  const body: Omit<BehaviorPackage, "digest"> = {
    schema_version: PACKAGE_VERSION,
    manifest: {
      name: options.name,
      version: options.version ?? "0.1.0",
      task_family: options.taskFamily ?? "",
      capture_fidelity: options.captureFidelity ?? "F3",
      compiler_model_id: options.compilerModelId ?? null,
      required_capabilities: compiled.required_capabilities,
      effects: options.effects ?? {},
      effects_source: options.effectsSource ?? {},
      episodes: norm.length,
      promoted_to_e4: options.promoted ?? false,
    },
    ir: compiled.ir,
    signatures: compiled.signatures,
    provenance: compiled.provenance,
    candidates: candidates.map((c) => ({
      ...c,
      evidence: { ...c.evidence, episodes: c.evidence.episodes.slice(0, 10) },
    })),
    verification: { ...report, problems: report.problems.slice(0, 200) },
    sources: {
      digest: sha256Digest(canonicalJson(episodes)),
      episodes,
    },
  };
  return { ...body, digest: sha256Digest(canonicalJson(body)) };
}

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
