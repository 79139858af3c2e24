/**
 * The agent form's tuning parameters chosen per compile, on its own
 * training episodes only: every point is cross-validated the way the
 * shipped form is judged (`self_validation.ts`), and the best one is
 * built. The same procedure runs for every domain; a parameter the caller
 * sets is never tuned.
 *
 * The points are few, so that a compile stays affordable and the choice
 * is not made among many noisy ones: the defaults; one parameter at a
 * time at the value the training-only sweep (`bench/tune.ts`,
 * docs/evaluation.md) picked for some domain; and the steps that each beat
 * the defaults, together. The best point has the fewest stopped
 * conversations, then the most calls served without the model less a
 * tenth of its extra lookups ({@linkcode EXTRA_LOOKUP_COST}), then the
 * fewest extra lookups; on a tie the earlier point (the defaults first)
 * wins.
 *
 * @module
 */
import type { NormEpisode } from "../../lineage/records.ts";
import type { AgentFormOptions, AgentTuning } from "./build_agent_form.ts";
import { validateAgentForm } from "./self_validation.ts";
import { EXTRA_LOOKUP_COST } from "./lookup_selection.ts";
import type {
  SelfValidation,
  VerificationReport,
} from "../../package/verification.ts";

/** What the tuning tried and chose (`verification.tuning`). */
type SelfTuning = NonNullable<VerificationReport["tuning"]>;
/** One tried point. */
type TunedPoint = SelfTuning["tried"][number];
/** Parameters by their snake_case names. */
type TuningPoint = Record<string, number>;

/**
 * The single steps away from the defaults, each a value the training-only
 * sweep picked on some domain (adjacency 0.7 on retail; coverage 0.7 and
 * 0.8 and least yield 0.1 on τ² airline; budget 5 on τ² airline).
 */
export const TUNING_STEPS: readonly AgentTuning[] = [
  { adjacentShare: 0.7 },
  { speculativeCoverage: 0.7 },
  { speculativeCoverage: 0.8 },
  { minYield: 0.1 },
  { extraLookupBudget: 5 },
];

const WIRE: Record<keyof AgentTuning, string> = {
  fanout: "fanout",
  minYield: "min_yield",
  extraLookupBudget: "extra_lookup_budget",
  adjacentShare: "adjacent_share",
  speculativeCoverage: "speculative_coverage",
};

function wire(p: AgentTuning): TuningPoint {
  const out: TuningPoint = {};
  for (const [k, v] of Object.entries(p)) {
    if (v !== undefined) out[WIRE[k as keyof AgentTuning]] = v;
  }
  return out;
}

/** Calls served, less what the extra lookups cost. */
function net(v: SelfValidation): number {
  return v.served - EXTRA_LOOKUP_COST * v.extra_lookups;
}

/** Whether `a` cross-validated better than `b`. */
function better(a: SelfValidation, b: SelfValidation): boolean {
  if (a.stopped !== b.stopped) return a.stopped < b.stopped;
  if (net(a) !== net(b)) return net(a) > net(b);
  return a.extra_lookups < b.extra_lookups;
}

/** What {@linkcode tuneAgentForm} chose. */
export interface TunedForm {
  /** The options to build the shipped form with. */
  options: AgentFormOptions;
  /** The cross-validation of those options (null: too few episodes). */
  validation: SelfValidation | null;
  /** What was tried (null: too few episodes, or nothing left to tune). */
  tuning: SelfTuning | null;
}

/**
 * Choose the tuning parameters the caller left unset by cross-validation
 * on the training episodes.
 *
 * @param episodes Normalized training episodes.
 * @param options The agent form's options; a tuning parameter set here is
 *   fixed.
 * @returns The options to build with, their cross-validation and what was
 *   tried.
 */
export function tuneAgentForm(
  episodes: NormEpisode[],
  options: AgentFormOptions,
): TunedForm {
  const base = validateAgentForm(episodes, options);
  const fixed = (Object.keys(WIRE) as (keyof AgentTuning)[]).filter((k) =>
    options[k] !== undefined
  );
  const steps = TUNING_STEPS.filter((s) =>
    Object.keys(s).every((k) => !fixed.includes(k as keyof AgentTuning))
  );
  if (!base || !steps.length) {
    return { options, validation: base, tuning: null };
  }
  const tried: { step: AgentTuning; v: SelfValidation }[] = [
    { step: {}, v: base },
  ];
  for (const step of steps) {
    const v = validateAgentForm(episodes, { ...options, ...step });
    if (v) tried.push({ step, v });
  }
  // The steps that beat the defaults, together (the better value first
  // where two steps set the same parameter).
  const gains = tried.slice(1).filter((t) => better(t.v, base))
    .sort((a, b) => better(a.v, b.v) ? -1 : better(b.v, a.v) ? 1 : 0);
  if (gains.length > 1) {
    const step: AgentTuning = {};
    for (const g of gains) {
      for (const [k, v] of Object.entries(g.step)) {
        (step as Record<string, number>)[k] ??= v;
      }
    }
    if (Object.keys(step).length > 1) {
      const v = validateAgentForm(episodes, { ...options, ...step });
      if (v) tried.push({ step, v });
    }
  }
  let pick = tried[0];
  for (const t of tried) if (better(t.v, pick.v)) pick = t;
  const points: TunedPoint[] = tried.map((t) => ({
    params: wire(t.step),
    served: t.v.served,
    calls: t.v.calls,
    extra_lookups: t.v.extra_lookups,
    stopped: t.v.stopped,
  }));
  return {
    options: { ...options, ...pick.step },
    validation: pick.v,
    tuning: {
      picked: wire(pick.step),
      tried: points,
      fixed: fixed.map((k) => WIRE[k]),
    },
  };
}
