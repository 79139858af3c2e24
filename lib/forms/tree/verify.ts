/**
 * Verification of the tree form: the structural check
 * (`../../package/structure_check.ts`) first, then replay of the compiled
 * deterministic behavior against every historical episode on the tree
 * engine the runtime runs (`tree_engine.ts`), with recorded tool results
 * standing in for the tools and the recorded choices standing in for
 * residual leaves: every action's arguments must equal the recorded ones,
 * every branch must choose the recorded arm. No check trusts a model.
 *
 * @module
 */
import type { NormEpisode } from "../../lineage/records.ts";
import type { Effects } from "../../package/tool_effects.ts";
import type { CompiledBehavior } from "../../package/ir.ts";
import { checkStructure } from "../../package/structure_check.ts";
import { TREE_KINDS } from "./tree_kinds.ts";
import type { VerificationReport } from "../../package/verification.ts";
import { replayEpisode } from "./tree_replay.ts";

/** Options of {@linkcode verify}. */
export interface VerifyOptions {
  /** Tools the runtime will have; absent tools are structural problems. */
  requiredCapabilities?: Set<string> | null;
  /** Effects, for finding core steps. */
  effects?: Effects;
  /**
   * Stop at the first episode that does not replay clean (a trial: the
   * caller only asks whether the behavior verifies clean).
   * @default false
   */
  untilUnclean?: boolean;
}

/**
 * Verify a compiled behavior against episodes.
 *
 * @param compiled The compiled behavior.
 * @param episodes Every historical episode.
 * @param options Capabilities, effects.
 * @returns The report.
 */
export function verify(
  compiled: CompiledBehavior,
  episodes: NormEpisode[],
  options: VerifyOptions = {},
): VerificationReport {
  const structural_problems = checkStructure(
    compiled,
    options.requiredCapabilities ?? null,
    TREE_KINDS,
  );
  const report: VerificationReport = {
    structural_ok: structural_problems.length === 0,
    structural_problems,
    replay_checks: 0,
    replay_passed: 0,
    problems: [],
    episodes_replayed: 0,
    episodes_clean: 0,
  };
  if (!report.structural_ok) return report;
  for (const ep of episodes) {
    const r = replayEpisode(compiled, ep, { effects: options.effects });
    report.episodes_replayed++;
    report.replay_checks += r.checks;
    report.replay_passed += r.passed;
    if (r.problems.length === 0) report.episodes_clean++;
    report.problems.push(...r.problems);
    if (options.untilUnclean && r.problems.length) break;
  }
  return report;
}
