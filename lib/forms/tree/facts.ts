/**
 * Local facts of one episode, over six atom types — one per staticization
 * question: `constant`, `dataflow`, `predicate`, `fixed_action`,
 * `recovery`, `classification`. Each fact has a stable key for grouping
 * equal claims across episodes: a position is the sequence of core tools up
 * to it (`find_user>list_orders>get_order`), and a step's result is named
 * `<tool>#<k>` (the k-th core call of that tool), so keys do not depend on
 * noise steps or retries.
 *
 * @module
 */
import type { NormEpisode } from "../../lineage/records.ts";
import { argumentLeaves } from "../../lineage/normalize.ts";
import { type CoreStep, coreSteps } from "../core_steps.ts";
import type { Effects } from "../../package/tool_effects.ts";
import { formatPath, parsePath } from "../../lineage/paths.ts";

/** The six atom types. */
export const FACT_TYPES = [
  "constant",
  "dataflow",
  "predicate",
  "fixed_action",
  "recovery",
  "classification",
] as const;

/** A local fact. */
export interface Fact {
  /** One of {@linkcode FACT_TYPES}. */
  type: string;
  /** What the episode shows. */
  claim: Record<string, unknown>;
  /** The episode. */
  episode_id: string;
  /** Its recorded outcome. */
  outcome_ok: boolean | null;
  /** The state keys before the step (for applicability). */
  state_before: Record<string, unknown>;
  /** Grouping key (stable across episodes). */
  key: string[];
}

/**
 * The string form of a fact key: parts joined by `|`.
 *
 * @param key Key parts.
 * @returns The key string.
 */
export function factKey(key: string[]): string {
  return key.join("|");
}

/** Position-independent names of an episode's core steps. */
export function coreNames(
  core: CoreStep[],
): { names: string[]; byStore: Map<string, string> } {
  const counts = new Map<string, number>();
  const names: string[] = [];
  const byStore = new Map<string, string>();
  for (const c of core) {
    const t = c.step.logical_tool;
    const k = counts.get(t) ?? 0;
    counts.set(t, k + 1);
    const name = `${t}#${k}`;
    names.push(name);
    if (c.step.store) byStore.set(c.step.store, name);
  }
  return { names, byStore };
}

/**
 * Rewrite the stores a lineage source names (`get_order_4.total`) with a
 * mapping (to `get_order#0.total`, or to skeleton stores).
 *
 * @param source A path or a template.
 * @param map Store → new name.
 * @returns The rewritten source, or null when a store is unmapped.
 */
export function renameStores(
  source: string,
  map: (store: string) => string | undefined,
): string | null {
  const one = (path: string): string | null => {
    let segs;
    try {
      segs = parsePath(path);
    } catch {
      return null;
    }
    const first = segs[0];
    if (!first || !("key" in first)) return null;
    const to = first.key === "input" ? "input" : map(first.key);
    if (to === undefined) return null;
    return formatPath([{ key: to }, ...segs.slice(1)]);
  };
  if (!source.includes("$ref(")) return one(source);
  let failed = false;
  const out = source.replace(/\$ref\(([^)]*)\)/g, (_m, p: string) => {
    const r = one(p);
    if (r === null) failed = true;
    return `$ref(${r})`;
  });
  return failed ? null : out;
}

/** Categorical fields of a value (strings up to 40 characters, booleans), depth ≤ 2, not inside lists. */
export function categoricalFields(
  value: unknown,
  prefix: string,
  depth = 2,
): [string, unknown][] {
  const out: [string, unknown][] = [];
  if (
    typeof value !== "object" || value === null || Array.isArray(value) ||
    depth <= 0
  ) return out;
  for (const [k, v] of Object.entries(value)) {
    if (!/^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(k)) continue;
    const p = `${prefix}.${k}`;
    if ((typeof v === "string" && v.length <= 40) || typeof v === "boolean") {
      out.push([p, v]);
    } else if (typeof v === "object") {
      out.push(...categoricalFields(v, p, depth - 1));
    }
  }
  return out;
}

// One pass over the core steps emits every atom type in key order; split, the passes would have to agree on positions.
/**
 * The local facts of one episode.
 *
 * @param ep A normalized episode.
 * @param options Effects (which tools change state), for finding noise.
 * @returns Its facts.
 */
export function extractFacts(
  ep: NormEpisode,
  options: { effects?: Effects } = {},
): Fact[] {
  const core = coreSteps(ep, options.effects ?? {});
  const { names, byStore } = coreNames(core);
  const facts: Fact[] = [];
  // A position is named by the tools of the core steps up to it.
  const prefixes = core.map((_, i) =>
    core.slice(0, i + 1).map((c) => c.step.logical_tool).join(">")
  );
  const base = { episode_id: ep.episode_id, outcome_ok: ep.success };
  // Categorical fields visible so far, by position-independent path.
  let fields: [string, unknown][] = [];
  for (let i = 0; i < core.length; i++) {
    const { step, recovered, attempts } = core[i];
    const name = names[i];
    const at = prefixes[i];
    const prev = i === 0 ? "start" : prefixes[i - 1];
    const state_before = step.state_before;
    facts.push({
      ...base,
      type: "fixed_action",
      key: ["fixed_action", prev],
      claim: { next: step.logical_tool },
      state_before,
    });
    for (const [field, value] of fields) {
      facts.push({
        ...base,
        type: "predicate",
        key: ["predicate", prev, field],
        claim: { value, next: step.logical_tool },
        state_before,
      });
    }
    for (const code of new Set(recovered)) {
      facts.push({
        ...base,
        type: "recovery",
        key: ["recovery", step.logical_tool, code],
        claim: { recovered: step.ok, attempts },
        state_before,
      });
    }
    for (const { path, value } of argumentLeaves(step.arguments)) {
      const source = step.arg_lineage[path] ?? null;
      const renamed = source === null
        ? null
        : renameStores(source, (s) => byStore.get(s));
      if (renamed !== null) {
        facts.push({
          ...base,
          type: "dataflow",
          key: ["dataflow", at, path],
          claim: { source: renamed, value },
          state_before,
        });
      } else {
        facts.push({
          ...base,
          type: "constant",
          key: ["constant", at, path],
          claim: { value },
          state_before,
        });
      }
      const symbolic = renamed ?? (typeof value === "string" ? value : null);
      if (symbolic !== null) {
        for (const [field, fv] of fields) {
          facts.push({
            ...base,
            type: "classification",
            key: ["classification", at, path, field],
            claim: { value: fv, output: symbolic },
            state_before,
          });
        }
      }
    }
    if (step.ok) {
      fields = [...fields, ...categoricalFields(step.result, name)];
    }
  }
  return facts;
}
