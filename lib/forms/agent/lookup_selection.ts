/**
 * Which lookup nodes the agent form keeps, judged on training replay
 * only: tools most useful first (the share of a node's calls the agent
 * made too), each kept while the training episodes' extra lookups stay
 * within the budget; the narrowed variants of each lookup (`lookup_variants.ts`:
 * items the user mentioned, words in order, arguments from one record) are
 * measured beside the other tools' plain lookups, and of one tool's nodes
 * the one that serves the most, less what its extra lookups cost, is tried
 * first; a fallback keeping each argument's primary source is tried for a
 * tool none of whose other nodes was kept.
 *
 * @module
 */
import type { LeafMemo } from "./call_leaves.ts";
import type { NormEpisode } from "../../lineage/records.ts";
import type { Effects } from "../../package/tool_effects.ts";
import type { BehaviorIr } from "../../package/ir.ts";
import type { AgentFormNode, LookupNode } from "./agent_nodes.ts";
import { replayAgent } from "./agent_replay.ts";
import {
  adjacentVariants,
  jointVariants,
  mentionedVariant,
  primaryVariant,
} from "./lookup_variants.ts";
import type { Binding } from "./binding_types.ts";
import type { WordsMemo } from "./user_words.ts";
import { canonicalJson } from "../../trace/canonical_json.ts";

/**
 * What an extra lookup costs against a call served without the model: a
 * served call saves a model request (the whole context read again), an
 * extra lookup adds one result to the context. Chosen on validation parts
 * of the training splits only (docs/evaluation.md, "Tuned per compile"):
 * at 0.1 every τ airline file served at least as many calls in no more
 * model turns than at 0.25 or 0.5, for at most 1.3 more extra lookups per
 * episode (at 1 one file, aide, kept its defaults and served 1.6 points
 * more, the others fewer); at 0 the tuning took points that doubled
 * τ-bench v1's extra lookups for 1.4 more points. The compile's tuning
 * scores its points with it, and the lookup selection its nodes.
 */
export const EXTRA_LOOKUP_COST = 0.1;

/** Calls a lookup node issued in training replay, and those the agent made too. */
type Yield = { issued: number; used: number };

/** Options of {@linkcode selectLookups}. */
export interface LookupSelectionOptions {
  /** The agent form's IR with these lookup nodes. */
  irOf: (lookups: AgentFormNode[]) => BehaviorIr;
  /** Tool effects. */
  effects: Effects;
  /** Least share of a node's calls the agent must have made. */
  minYield: number;
  /** Most extra lookups per training episode the kept nodes may cost. */
  budget: number;
  /** What a compile already worked out (its builds share it). */
  memo?: CompileMemo;
  /** The bindings learned (for the variants that take arguments together). */
  bindings?: readonly Binding[];
}

/** What a set of lookup nodes yields over the training replay. */
export interface Measure {
  /** Calls issued and used, by node id. */
  totals: Record<string, Yield>;
  /** Extra lookups per episode. */
  extraPerEpisode: number;
}

/**
 * What a compile already worked out, shared by its builds (the tuning
 * points and the cross-validation folds build from the same episodes):
 * messages cut into words, and what a set of lookup nodes yields over a
 * set of episodes. One per compile; never shared between compiles.
 */
export interface CompileMemo {
  /** Messages cut into words, by text. */
  words: WordsMemo;
  /** Results walked into leaves, by object. */
  leaves: LeafMemo;
  /** Training replay measures, by IR and episodes. */
  measures: Map<string, Measure>;
}

/** A fresh {@linkcode CompileMemo}. */
export function newCompileMemo(): CompileMemo {
  return { words: new Map(), leaves: new WeakMap(), measures: new Map() };
}

function measure(
  episodes: NormEpisode[],
  ir: BehaviorIr,
  options: LookupSelectionOptions,
): Measure {
  const { effects, memo } = options;
  const key = memo
    ? `${canonicalJson(ir)}\u0000${episodes.map((e) => e.episode_id).join()}`
    : "";
  const hit = memo?.measures.get(key);
  if (hit) return hit;
  const totals: Record<string, Yield> = {};
  let extra = 0;
  for (const ep of episodes) {
    const r = replayAgent(ir, {
      episode: ep,
      effects,
      words: memo?.words,
      leaves: memo?.leaves,
    });
    extra += r.extra_lookups;
    for (const [id, c] of Object.entries(r.by_node)) {
      const t = (totals[id] ??= { issued: 0, used: 0 });
      t.issued += c.issued;
      t.used += c.used;
    }
  }
  const out = {
    totals,
    extraPerEpisode: episodes.length ? extra / episodes.length : 0,
  };
  memo?.measures.set(key, out);
  return out;
}

/**
 * Keep the lookup nodes that pay.
 *
 * @param episodes Normalized training episodes.
 * @param options The lookup nodes whose arguments bind, how to build the
 *   IR, effects, fan-out, least yield, budget.
 * @returns The kept nodes sorted by id, and the dropped ones with why.
 */
export function selectLookups(
  episodes: NormEpisode[],
  options: LookupSelectionOptions & {
    /** Every lookup node whose arguments bind. */
    lookups: AgentFormNode[];
  },
): { kept: AgentFormNode[]; dropped: { node: string; why: string }[] } {
  const { lookups } = options;
  const { minYield, budget } = options;
  const measured = (nodes: AgentFormNode[]) =>
    measure(episodes, options.irOf(nodes), options);
  // A copy: the variants' figures are added to it, and measures are shared.
  const alone = { ...measured(lookups).totals };
  const fallbacks: LookupNode[] = [];
  const variants = lookups.flatMap((n) => {
    const p = primaryVariant(n as LookupNode);
    if (p) fallbacks.push(p);
    const mentioned = mentionedVariant(
      n as LookupNode,
      episodes,
      options.memo,
    );
    const vs = [
      ...(mentioned ? [mentioned] : []),
      ...adjacentVariants(n as LookupNode),
      ...jointVariants(n as LookupNode, options.bindings ?? []),
    ];
    const others = lookups.filter((o) =>
      (o as LookupNode).tool !== (n as LookupNode).tool
    );
    for (const v of vs) {
      Object.assign(alone, { [v.id]: measured([...others, v]).totals[v.id] });
    }
    return vs;
  });
  const yieldOf = (id: string) => {
    const t = alone[id] ?? { issued: 0, used: 0 };
    return t.issued ? t.used / t.issued : 0;
  };
  const ranked = [...lookups, ...variants].sort((a, b) =>
    yieldOf(b.id) - yieldOf(a.id) || (a.id < b.id ? -1 : 1)
  );
  // Tools in the order of their best yield; within a tool, the node that
  // serves the most, less what its extra lookups cost, is tried first (a
  // node that reads every earlier search together serves more than the
  // plain one, which its cap stops, at a lower yield). Where training
  // cannot tell them apart, a variant goes first: it narrows the product
  // of its sources (a record, a mention, a word order).
  const net = (id: string) => {
    const t = alone[id] ?? { issued: 0, used: 0 };
    return t.used - EXTRA_LOOKUP_COST * (t.issued - t.used);
  };
  const toolOf = (n: AgentFormNode) => (n as LookupNode).tool;
  const plain = new Set(lookups.map((n) => n.id));
  const order = [...new Set(ranked.map(toolOf))].flatMap((tool) =>
    ranked.filter((n) => toolOf(n) === tool).sort((a, b) =>
      net(b.id) - net(a.id) || yieldOf(b.id) - yieldOf(a.id) ||
      Number(plain.has(a.id)) - Number(plain.has(b.id)) ||
      (a.id < b.id ? -1 : 1)
    )
  );
  const kept: AgentFormNode[] = [];
  const dropped: { node: string; why: string }[] = [];
  for (const n of [...order, ...fallbacks]) {
    const tool = toolOf(n);
    if (kept.some((k) => toolOf(k) === tool)) continue;
    const trial = measured([...kept, n]);
    const t = trial.totals[n.id] ?? { issued: 0, used: 0 };
    const why = t.used < 2 || t.used < minYield * t.issued
      ? `training replay: ${t.used} of ${t.issued} calls used (needs ${
        Math.round(minYield * 100)
      }% and 2)`
      : trial.extraPerEpisode > budget
      ? `training replay: ${
        trial.extraPerEpisode.toFixed(2)
      } extra lookups per episode with it (budget ${budget})`
      : null;
    if (why) dropped.push({ node: n.id, why });
    else kept.push(n);
  }
  return { kept: kept.sort((a, b) => a.id < b.id ? -1 : 1), dropped };
}
