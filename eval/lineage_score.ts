/**
 * Lineage against ground truth: each ground-truth action is matched to the
 * episode's call of the same tool sharing the most argument values; every
 * identifier-like argument whose value equals the ground truth is scored —
 * attributed (lineage found a source) and correct (that source resolves,
 * in the state before the call, to the value).
 *
 * @module
 */
import { canonicalJson } from "../lib/trace/canonical_json.ts";
import type { NormEpisode, NormStep } from "../lib/lineage/records.ts";
import { argumentLeaves } from "../lib/lineage/normalize.ts";
import { isMeaningful } from "../lib/lineage/meaningful.ts";
import { resolvePath } from "../lib/lineage/paths.ts";

/** Counts of a lineage score. */
export interface LineageScore {
  /** Ground-truth values the episode's calls reproduced. */
  ground_truth_values: number;
  /** Of those, values lineage attributed. */
  attributed: number;
  /** Of those, attributions that resolve to the value. */
  correct: number;
  /** Values lineage did not attribute (`tool.arg = value`, first 50). */
  misses: string[];
}

/** An empty score. */
export function emptyLineageScore(): LineageScore {
  return { ground_truth_values: 0, attributed: 0, correct: 0, misses: [] };
}

function leafMap(args: Record<string, unknown>): Map<string, string> {
  return new Map(
    argumentLeaves(args).map((l) => [l.path, canonicalJson(l.value)]),
  );
}

/** What {@linkcode scoreLineage} scores. */
export interface ScoredEpisode {
  /** The normalized episode. */
  episode: NormEpisode;
  /** Ground-truth actions. */
  actions: { name: string; arguments: Record<string, unknown> }[];
}

/**
 * Score one episode against its ground-truth actions, adding into `into`.
 *
 * @param into The running score.
 * @param episode The normalized episode and its ground-truth actions.
 */
export function scoreLineage(
  into: LineageScore,
  episode: ScoredEpisode,
): void {
  const { episode: norm, actions } = episode;
  for (const a of actions) {
    const truth = argumentLeaves(a.arguments);
    let best: NormStep | null = null;
    let bestShared = 0;
    for (const step of norm.steps) {
      if (step.logical_tool !== a.name) continue;
      const mine = leafMap(step.arguments);
      const shared = truth.filter((l) =>
        mine.get(l.path) === canonicalJson(l.value)
      ).length;
      if (shared > bestShared) [best, bestShared] = [step, shared];
    }
    if (!best) continue;
    const mine = leafMap(best.arguments);
    for (const { path, value } of truth) {
      if (!isMeaningful(value) || mine.get(path) !== canonicalJson(value)) {
        continue;
      }
      into.ground_truth_values++;
      const src = best.arg_lineage[path];
      if (!src) {
        if (into.misses.length < 50) {
          into.misses.push(`${a.name}.${path} = ${JSON.stringify(value)}`);
        }
        continue;
      }
      into.attributed++;
      const state = best.state_before;
      const ok = src.includes("$ref(")
        ? [...src.matchAll(/\$ref\(([^)]*)\)/g)].every((m) =>
          String(value).includes(String(resolvePath(state, m[1])))
        )
        : canonicalJson(resolvePath(state, src)) === canonicalJson(value);
      if (ok) into.correct++;
    }
  }
}
