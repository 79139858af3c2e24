/**
 * Consolidation: group facts by key, measure support and
 * counterexamples against the applicable episodes, and grade.
 *
 * Grades (E4 and E5 are never assigned here):
 * - **contested**: any applicable episode contradicts the claim. Status
 *   `contested`, grade `E0`: never a hard rule, whatever the frequency.
 * - **E3**: uncontested, and the caller's contracts name the key
 *   (`contract_sources` filled). A contested key keeps its contract
 *   sources but stays contested.
 * - **E2**: uncontested, support ≥ 5, and variety: ≥ 3 distinct instance
 *   values all agreeing (a dataflow that matched its source for many
 *   different ids, a predicate that held for several values); claims with
 *   no instance variety (constants, fixed actions, recoveries) need support
 *   ≥ 10.
 * - **E1**: uncontested, support ≥ 2.
 * - **E0**: anything less.
 *
 * Predicates and classifications are kept only where they explain
 * variation: the group's mapping reaches at least two different outcomes,
 * over at most 16 values.
 *
 * @module
 */
import { canonicalJson } from "../../trace/canonical_json.ts";
import { sha256Hex } from "../../trace/hash.ts";
import type { NormEpisode } from "../../lineage/records.ts";
import { extractFacts, type Fact, factKey } from "./facts.ts";
import type { Effects } from "../../package/tool_effects.ts";
import type { Candidate, Evidence } from "../../package/candidate.ts";

/** Options of {@linkcode consolidate}. */
export interface ConsolidateOptions {
  /** Fact key string → contract source ids. */
  contracts?: Record<string, string[]> | null;
  /** Tool effects (to find noise steps). */
  effects?: Effects;
  /** Facts already extracted (else extracted here). */
  facts?: Fact[];
}

const MAX_VALUES = 16;

function grade(type: string, ev: Evidence): string {
  if (ev.counterexamples > 0) return "E0";
  const varietyless = type === "constant" || type === "fixed_action" ||
    type === "recovery";
  if (ev.support >= 5 && (varietyless ? ev.support >= 10 : ev.variety >= 3)) {
    return "E2";
  }
  if (ev.support >= 2) return "E1";
  return "E0";
}

/**
 * Consolidate the facts of several episodes into graded candidates.
 *
 * @param episodes Normalized episodes.
 * @param options Contracts, effects, pre-extracted facts.
 * @returns Candidates sorted by key.
 */
export function consolidate(
  episodes: NormEpisode[],
  options: ConsolidateOptions = {},
): Candidate[] {
  const facts = options.facts ??
    episodes.flatMap((e) => extractFacts(e, { effects: options.effects }));
  const groups = new Map<string, Fact[]>();
  for (const f of facts) {
    const k = factKey(f.key);
    const g = groups.get(k);
    if (g) g.push(f);
    else groups.set(k, [f]);
  }
  const out: Candidate[] = [];
  for (
    const [k, group] of [...groups].sort(([a], [b]) =>
      a < b ? -1 : a > b ? 1 : 0
    )
  ) {
    const c = consolidateGroup(group, options.contracts?.[k] ?? []);
    if (c) out.push(c);
  }
  return out;
}

// The two claim shapes (a value → outcome mapping, a modal value) share the vote and the evidence below them.
function consolidateGroup(
  group: Fact[],
  contracts: string[],
): Candidate | null {
  const type = group[0].type;
  const key = group[0].key;
  // One vote per episode: the first fact of the episode in this group.
  const byEpisode = new Map<string, Fact>();
  for (const f of group) {
    if (!byEpisode.has(f.episode_id)) byEpisode.set(f.episode_id, f);
  }
  const facts = [...byEpisode.values()];
  let claim: Record<string, unknown>;
  let agrees: (f: Fact) => boolean;
  let varietyOf: (f: Fact) => string;
  if (type === "predicate" || type === "classification") {
    const outKey = type === "predicate" ? "next" : "output";
    // Majority outcome per value.
    const votes = new Map<string, Map<string, number>>();
    for (const f of facts) {
      const v = canonicalJson(f.claim.value);
      const o = canonicalJson(f.claim[outKey]);
      const m = votes.get(v) ?? new Map<string, number>();
      m.set(o, (m.get(o) ?? 0) + 1);
      votes.set(v, m);
      // Too many values to be a predicate: stop counting at once.
      if (votes.size > MAX_VALUES) return null;
    }
    const mapping: [unknown, unknown][] = [];
    for (const [v, m] of [...votes].sort(([a], [b]) => a < b ? -1 : 1)) {
      const best = [...m].sort((a, b) =>
        b[1] - a[1] || (a[0] < b[0] ? -1 : 1)
      )[0][0];
      mapping.push([JSON.parse(v), JSON.parse(best)]);
    }
    if (new Set(mapping.map(([, o]) => canonicalJson(o))).size < 2) return null;
    const lookup = new Map(
      mapping.map(([v, o]) => [canonicalJson(v), canonicalJson(o)]),
    );
    claim = {
      field: key[key.length - 1],
      mapping: mapping.map(([value, o]) => ({ value, [outKey]: o })),
    };
    agrees = (f) =>
      lookup.get(canonicalJson(f.claim.value)) ===
        canonicalJson(f.claim[outKey]);
    varietyOf = (f) => canonicalJson(f.claim.value);
  } else {
    const field = type === "dataflow"
      ? "source"
      : type === "constant"
      ? "value"
      : type === "recovery"
      ? "recovered"
      : "next";
    const counts = new Map<string, number>();
    for (const f of facts) {
      const v = canonicalJson(f.claim[field]);
      counts.set(v, (counts.get(v) ?? 0) + 1);
    }
    const modal = [...counts].sort((a, b) =>
      b[1] - a[1] || (a[0] < b[0] ? -1 : 1)
    )[0][0];
    claim = { [field]: JSON.parse(modal) };
    if (type === "recovery") {
      claim.max_attempts = Math.max(
        ...facts.map((f) => Number(f.claim.attempts) || 1),
      );
    }
    agrees = (f) => canonicalJson(f.claim[field]) === modal;
    varietyOf = (f) =>
      canonicalJson(type === "dataflow" ? f.claim.value : f.claim[field]);
  }
  const supporters = facts.filter(agrees);
  const evidence: Evidence = {
    applicable: facts.length,
    support: supporters.length,
    counterexamples: facts.length - supporters.length,
    episodes: supporters.map((f) => f.episode_id).sort(),
    success_support: supporters.filter((f) => f.outcome_ok === true).length,
    fail_support: supporters.filter((f) => f.outcome_ok === false).length,
    variety: new Set(supporters.map(varietyOf)).size,
  };
  const contested = evidence.counterexamples > 0;
  const g = !contested && contracts.length ? "E3" : grade(type, evidence);
  return {
    candidate_id: `c_${type}_${sha256Hex(factKey(key)).slice(0, 8)}`,
    type,
    key,
    claim,
    evidence,
    grade: g,
    status: contested ? "contested" : "proposed",
    contract_sources: [...contracts].sort(),
  };
}
