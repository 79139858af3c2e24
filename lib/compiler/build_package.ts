/**
 * Packaging: `buildPackage` assembles the package record
 * (`lib/package/package.ts`) from a compiled behavior of either form, its
 * verification and candidates. Deterministic: the same input gives the
 * same bytes; nothing in the package depends on the clock.
 *
 * @module
 */
import { canonicalJson } from "../trace/canonical_json.ts";
import { sha256Digest } from "../trace/hash.ts";
import type { NormEpisode } from "../lineage/records.ts";
import type { Effects, EffectSource } from "../package/tool_effects.ts";
import type { CompiledForm } from "../forms/form.ts";
import { type BehaviorPackage, PACKAGE_VERSION } from "../package/package.ts";
import type { AppliesTo } from "../package/applies_to.ts";

/** Options of {@linkcode buildPackage}. */
export interface BuildPackageOptions {
  /** Package name. */
  name: string;
  /** The normalized episodes it was compiled from (for source digests). */
  episodes: NormEpisode[];
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
  /** Why it must not be served (replay on its training was not clean); null: servable. */
  notServable?: string | null;
  /** Which conversations it applies to when served (absent: not written). */
  appliesTo?: AppliesTo | null;
}

/**
 * Assemble the package document.
 *
 * @param built The compiled behavior, its verification and candidates.
 * @param options Name, episodes, family, effects, model, fidelity, version.
 * @returns The package.
 */
export function buildPackage(
  built: CompiledForm,
  options: BuildPackageOptions,
): BehaviorPackage {
  const { compiled, verification: report, candidates } = built;
  const norm = options.episodes;
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
      ...(options.notServable ? { not_servable: options.notServable } : {}),
    },
    ...(options.appliesTo ? { applies_to: options.appliesTo } : {}),
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
