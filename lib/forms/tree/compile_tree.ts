/**
 * The tree form's pipeline over normalized episodes: extract facts,
 * consolidate them into graded candidates, staticize the skeleton tree,
 * verify it by replaying every episode.
 *
 * @module
 */
import type { NormEpisode } from "../../lineage/records.ts";
import type { Effects } from "../../package/tool_effects.ts";
import type { CompiledForm } from "../form.ts";
import { consolidate } from "./consolidate.ts";
import { extractFacts } from "./facts.ts";
import type { CompilerModel } from "./residualize.ts";
import { staticize } from "./staticize.ts";
import { verify } from "./verify.ts";

/** Options of {@linkcode compileTree}. */
export interface CompileTreeOptions {
  /**
   * Behavior name.
   * @default "behavior"
   */
  name?: string;
  /** Tool effects: `read`, `write`, `destructive`. */
  effects: Effects;
  /** Fact key → contract source ids (lifts to E3). */
  contracts?: Record<string, string[]> | null;
  /** Optional compiler model (wording only). */
  model?: CompilerModel | null;
  /** Its id. */
  compilerModelId?: string | null;
  /** Progress callback (stage, done, total). */
  onProgress?: (stage: string, done: number, total: number) => void;
  /**
   * A trial (`--form auto`): verification stops at the first episode that
   * does not replay clean, since the tree is then not kept.
   * @default false
   */
  trial?: boolean;
}

/**
 * Compile the tree form and verify it against every episode.
 *
 * @param normalized Normalized episodes, sorted by id.
 * @param options Name, effects, contracts, compiler model, progress.
 * @returns The tree, its candidates and its verification.
 */
export function compileTree(
  normalized: NormEpisode[],
  options: CompileTreeOptions,
): CompiledForm {
  const progress = options.onProgress ?? (() => {});
  const { effects } = options;
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
  const verification = verify(compiled, normalized, {
    requiredCapabilities: new Set(compiled.required_capabilities),
    effects,
    untilUnclean: options.trial,
  });
  return { compiled, candidates, verification };
}
