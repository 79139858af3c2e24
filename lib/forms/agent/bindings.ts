/**
 * Binding facts keyed by tool and argument, pooled over every training
 * episode of a domain wherever the call sits in the episode: for each
 * `(tool, argument path)` the sources that explain the values the agent
 * passed (see `sources.ts`), with support, counterexamples and the episodes
 * behind them.
 *
 * Each binding keeps two covers, chosen greedily (most newly explained
 * calls first; data sources before constants before `user_text`; fewer
 * candidates first):
 * - `lookup`: only sources that enumerate values (results, arguments, user
 *   words, constants), so a lookup node can call the tool on each;
 * - `choice`: any source, `user_text` included, so a choice leaf can check
 *   a value the model proposes.
 * A cover is **deterministic** when every training call is explained by
 * its union (zero counterexamples) and each of its sources explains at
 * least 2 calls (a constant set at least 3).
 *
 * @module
 */
import type { SourceMemo } from "./sources.ts";
import type { LeafMemo } from "./call_leaves.ts";
import type { NormEpisode } from "../../lineage/records.ts";
import {
  type CallRecord,
  candidatesOf,
  type ConversationState,
  valueKey,
} from "./sources.ts";
import {
  argumentLeafList,
  generalArgPath,
  generalLeaves,
  parsedResult,
} from "./call_leaves.ts";
import {
  codeClassOf,
  type MessageWords,
  shapeOf,
  userWords,
  type WordsMemo,
  wordsOfMessage,
} from "./user_words.ts";
import type { Source } from "../../package/source.ts";
import { linkAdjacentWords, poolWriteSources } from "./binding_links.ts";
import { leaveOneEpisodeOut } from "./binding_holdout.ts";
import { poolTypedValues } from "./typed_values.ts";
import { datesInWords, isoYear } from "./user_dates.ts";
import { saysValue } from "./user_phrases.ts";
import {
  ADJACENT_SHARE,
  type Binding,
  type Cover,
  type Observation,
  sourceKey,
  SPECULATIVE_COVERAGE,
} from "./binding_types.ts";

/** Options of {@linkcode learnBindings}. */
export interface LearnOptions {
  /** Tool effects: arguments of state-changing tools pool their sources by name. */
  effects?: Record<string, string>;
  /** At most this many distinct constants make a constant set. @default 8 */
  maxEnum?: number;
  /**
   * Share of paired calls in which a second user-word argument stood right
   * after the first for the lookup to pair them that way.
   * @default {@linkcode ADJACENT_SHARE}
   */
  adjacentShare?: number;
  /**
   * Share of training calls a contested binding must explain to drive a
   * speculative lookup.
   * @default {@linkcode SPECULATIVE_COVERAGE}
   */
  speculativeCoverage?: number;
  /** Messages already cut into words (a compile's builds share them). */
  words?: WordsMemo;
  /** Results already walked into leaves (a compile's builds share them). */
  leaves?: LeafMemo;
}

/** The conversation state before each step of a normalized episode. */
export function statesOf(
  ep: NormEpisode,
  memo: SourceMemo = {},
): ConversationState[] {
  const words = memo.words;
  const leaves = memo.leaves ?? new WeakMap();
  const calls: CallRecord[] = [];
  const said: MessageWords[] = [];
  return ep.steps.map((s) => {
    const input = (s.state_before.input ?? {}) as { user?: string[] };
    const user = input.user ?? [];
    while (said.length < user.length) {
      said.push(wordsOfMessage(user[said.length], words));
    }
    const state = {
      user,
      calls: calls.slice(),
      userWords: said.slice(0, user.length),
      leaves,
    };
    calls.push({
      tool: s.logical_tool,
      args: s.arguments,
      ok: s.ok,
      result: parsedResult(s.result),
    });
    return state;
  });
}

function explainingSources(value: unknown, state: ConversationState): Source[] {
  const out: Source[] = [];
  const k = valueKey(value);
  for (const c of state.calls) {
    if (c.ok) {
      for (const l of generalLeaves(c.result, { memo: state.leaves })) {
        if (valueKey(l.value) === k) {
          out.push({ from: "result", tool: c.tool, path: l.path });
        }
      }
    }
    for (const l of argumentLeafList(c.args)) {
      if (valueKey(l.value) === k) {
        out.push({ from: "arg", tool: c.tool, path: generalArgPath(l.path) });
      }
    }
  }
  if (typeof value === "string" && value.length >= 2) {
    const saidWords = state.user.map((t, m) =>
      state.userWords?.[m]?.all ?? userWords(t)
    );
    if (saidWords.some((ws) => ws.includes(value))) {
      const latest = saidWords.at(-1)!.includes(value);
      for (const shape of [shapeOf(value), codeClassOf(value)]) {
        if (shape === null) continue;
        out.push({ from: "user", shape });
        if (latest) out.push({ from: "user", shape, latest: true });
      }
    }
    const prefix = /^[^A-Za-z0-9]{1,2}/.exec(value)?.[0];
    const rest = prefix ? value.slice(prefix.length) : "";
    if (
      prefix && rest.length >= 2 &&
      saidWords.some((ws) => ws.includes(rest))
    ) {
      out.push({ from: "user", shape: shapeOf(rest), prefix });
      if (saidWords.at(-1)!.includes(rest)) {
        out.push({ from: "user", shape: shapeOf(rest), prefix, latest: true });
      }
    }
    const year = isoYear(value);
    if (
      year !== null &&
      state.user.some((t) => datesInWords(t, year).includes(value))
    ) {
      out.push({ from: "user_date", year });
    }
    if (state.user.some((t) => t.includes(value))) {
      out.push({ from: "user_text" });
    }
  }
  const seen = new Set<string>();
  return out.filter((s) => {
    const key = sourceKey(s);
    return seen.has(key) ? false : (seen.add(key), true);
  });
}

const RANK: Record<Source["from"], number> = {
  result: 0,
  arg: 0,
  user: 0,
  user_date: 0,
  user_word: 0,
  const: 1,
  user_text: 2,
};

function cover(
  obs: Observation[],
  pool: Map<string, Source>,
  allowed: (s: Source) => boolean,
  options: { every?: boolean; speculativeCoverage: number },
): Cover {
  const every = options.every ?? false;
  const left = new Set(obs.keys());
  const chosen: Source[] = [];
  const support: number[] = [];
  const offered: number[] = [];
  const stats = new Map<string, { support: number; mean: number }>();
  for (const [key, s] of pool) {
    if (!allowed(s)) continue;
    let sup = 0, n = 0, total = 0;
    for (const o of obs) {
      if (o.explainedBy.has(key)) sup++;
      if (s.from !== "user_text") {
        const c = candidatesOf(s, o.state).length;
        if (c) [n, total] = [n + 1, total + c];
      }
    }
    stats.set(key, { support: sup, mean: n ? total / n : 1 });
  }
  for (;;) {
    let best: string | null = null;
    let bestGain = 0;
    for (const [key, s] of pool) {
      const st = stats.get(key);
      if (!st || chosen.includes(s)) continue;
      if (st.support < (s.from === "const" ? 3 : 2)) continue;
      let gain = 0;
      for (const i of left) if (obs[i].explainedBy.has(key)) gain++;
      if (gain === 0) continue;
      const b = best === null ? null : pool.get(best)!;
      const better = best === null || gain > bestGain ||
        (gain === bestGain &&
          (RANK[s.from] < RANK[b!.from] ||
            (RANK[s.from] === RANK[b!.from] &&
              (st.mean < stats.get(best)!.mean ||
                (st.mean === stats.get(best)!.mean && key < best)))));
      if (better) [best, bestGain] = [key, gain];
    }
    if (best === null) {
      if (!every) break;
      // A checking cover also keeps every other source that explained
      // calls in training: each is a kind of source training saw for it.
      for (const [key, s] of pool) {
        const st = stats.get(key);
        if (!st || chosen.includes(s)) continue;
        if (st.support < (s.from === "const" ? 3 : 2)) continue;
        chosen.push(s);
        support.push(st.support);
        offered.push(st.mean);
      }
      break;
    }
    const s = pool.get(best)!;
    chosen.push(s);
    support.push(stats.get(best)!.support);
    offered.push(stats.get(best)!.mean);
    for (const i of [...left]) if (obs[i].explainedBy.has(best)) left.delete(i);
  }
  const enough = chosen.every((s, i) =>
    support[i] >= (s.from === "const" ? 3 : 2)
  );
  return {
    sources: chosen,
    support,
    explained: obs.length - left.size,
    counterexamples: left.size,
    mean_candidates: offered.length
      ? Math.max(...offered.map((m, i) => (chosen[i].from === "const" ? m : m)))
      : 0,
    deterministic: left.size === 0 && enough && chosen.length > 0,
    speculative: enough && chosen.length > 0 &&
      obs.length - left.size >= options.speculativeCoverage * obs.length,
  };
}

// Observations are grouped and turned into bindings in one pass that shares the per-episode states.
/**
 * Learn the bindings of every tool argument from training episodes.
 *
 * @param episodes Normalized training episodes.
 * @param options Effects, constant-set size, adjacency and speculative
 *   coverage shares.
 * @returns Bindings sorted by tool and path.
 */
export function learnBindings(
  episodes: NormEpisode[],
  options: LearnOptions = {},
): Binding[] {
  const maxEnum = options.maxEnum ?? 8;
  const speculativeCoverage = options.speculativeCoverage ??
    SPECULATIVE_COVERAGE;
  const groups = new Map<string, Observation[]>();
  for (const ep of episodes) {
    const states = statesOf(ep, {
      words: options.words,
      leaves: options.leaves,
    });
    ep.steps.forEach((step, i) => {
      // A call that failed is the agent's mistake, not behavior to bind.
      if (!step.ok) return;
      const state = states[i];
      for (const { path, value } of argumentLeafList(step.arguments)) {
        const key = `${step.logical_tool}\u0000${generalArgPath(path)}`;
        const sources = explainingSources(value, state);
        const userWordAt = new Map<number, number[]>();
        if (typeof value === "string") {
          state.user.forEach((t, m) => {
            const ws = state.userWords?.[m]?.all ?? userWords(t);
            const at = ws.flatMap((w, j) => (w === value ? [j] : []));
            if (at.length) userWordAt.set(m, at);
          });
        }
        const o: Observation = {
          episode: ep.episode_id,
          call: `${ep.episode_id}#${i}`,
          value,
          state,
          explainedBy: new Set(sources.map(sourceKey)),
          userWordAt,
        };
        (o as Observation & { sources: Source[] }).sources = sources;
        const list = groups.get(key);
        if (list) list.push(o);
        else groups.set(key, [o]);
      }
    });
  }
  const out: Binding[] = [];
  for (const [key, obs] of [...groups].sort(([a], [b]) => a < b ? -1 : 1)) {
    const [tool, path] = key.split("\u0000");
    const pool = new Map<string, Source>();
    for (const o of obs) {
      for (const s of (o as Observation & { sources: Source[] }).sources) {
        pool.set(sourceKey(s), s);
      }
    }
    const values = new Map<string, unknown>();
    for (const o of obs) values.set(valueKey(o.value), o.value);
    if (
      values.size <= maxEnum && obs.length >= 3 && values.size * 2 <= obs.length
    ) {
      const c: Source = {
        from: "const",
        values: [...values.values()].sort((a, b) =>
          valueKey(a) < valueKey(b) ? -1 : 1
        ),
      };
      const ck = sourceKey(c);
      pool.set(ck, c);
      for (const o of obs) o.explainedBy.add(ck);
    }
    // Values users said in their own words: a table of what training saw.
    const said = obs.filter((o) =>
      o.state.user.some((t) => saysValue(o.value, t))
    );
    if (said.length >= 2) {
      const table = new Map(said.map((o) => [valueKey(o.value), o.value]));
      const w: Source = {
        from: "user_word",
        values: [...table].sort(([a], [b]) => a < b ? -1 : 1).map(([, v]) => v),
      };
      const wk = sourceKey(w);
      pool.set(wk, w);
      for (const o of said) o.explainedBy.add(wk);
    }
    out.push({
      tool,
      path,
      applicable: obs.length,
      variety: values.size,
      episodes: [...new Set(obs.map((o) => o.episode))].sort().slice(0, 10),
      lookup: cover(obs, pool, (s) => s.from !== "user_text", {
        speculativeCoverage,
      }),
      choice: cover(obs, pool, () => true, {
        every: true,
        speculativeCoverage,
      }),
    });
  }
  linkAdjacentWords(out, {
    groups,
    adjacentShare: options.adjacentShare ?? ADJACENT_SHARE,
  });
  if (options.effects) {
    poolWriteSources(out, { groups, effects: options.effects });
    poolTypedValues(out, { groups, effects: options.effects });
    leaveOneEpisodeOut(out, { groups, effects: options.effects, maxEnum });
  }
  return out;
}
