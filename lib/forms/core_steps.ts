/**
 * The steps of an episode that matter: retries of a failed call collapse
 * into one step with its recovered error codes, and steps whose results
 * nothing later uses and that change nothing (noise) are dropped.
 *
 * @module
 */
import { canonicalJson } from "../trace/canonical_json.ts";
import type { NormEpisode, NormStep } from "../lineage/records.ts";
import { parsePath } from "../lineage/paths.ts";
import { changesState, type Effects } from "../package/tool_effects.ts";

/** A step that stays, with what it took to get it done. */
export interface CoreStep {
  /** The (last) step. */
  step: NormStep;
  /** Calls made for it (1 + retries). */
  attempts: number;
  /** Error codes of the failed attempts, in order. */
  recovered: string[];
}

/**
 * The error code of a failed step, when it has one.
 *
 * @param step A step.
 * @returns The code or null.
 */
export function errorCode(step: NormStep): string | null {
  const e = step.error as { code?: unknown; type?: unknown } | null;
  if (!e || typeof e !== "object") return null;
  return typeof e.code === "string"
    ? e.code
    : typeof e.type === "string"
    ? e.type
    : null;
}

/**
 * Stores an argument lineage refers to.
 *
 * @param source A lineage source or template.
 * @returns Top-level store names.
 */
export function referencedStores(source: string | null): string[] {
  if (!source) return [];
  const paths = source.includes("$ref(")
    ? [...source.matchAll(/\$ref\(([^)]*)\)/g)].map((m) => m[1])
    : [source];
  const out: string[] = [];
  for (const p of paths) {
    try {
      const first = parsePath(p)[0];
      if (first && "key" in first) out.push(first.key);
    } catch { /* not a path */ }
  }
  return out;
}

/**
 * An episode as the forms train on it: a call that failed or was refused
 * (`denied`, `exit 1`) and was not tried again right after (the next call
 * is not the same call) is dropped: it is evidence about the tool, never a
 * step to reproduce. A failed attempt followed by the same call stays (the
 * retry is recovery, which `coreSteps` collapses).
 *
 * @param ep A normalized episode.
 * @returns The same episode, or a copy without its dead ends.
 */
export function withoutDeadEnds(ep: NormEpisode): NormEpisode {
  const retried = (i: number) => {
    const next = ep.steps[i + 1];
    return next !== undefined &&
      next.logical_tool === ep.steps[i].logical_tool &&
      canonicalJson(next.arguments) === canonicalJson(ep.steps[i].arguments);
  };
  const steps = ep.steps.filter((s, i) => s.ok || retried(i));
  return steps.length === ep.steps.length ? ep : { ...ep, steps };
}

/**
 * The core steps of an episode.
 *
 * @param ep A normalized episode.
 * @param effects Which tools change state.
 * @returns The core steps in order.
 */
export function coreSteps(ep: NormEpisode, effects: Effects): CoreStep[] {
  // 1. Collapse retries: a failed call followed by the same call.
  const merged: CoreStep[] = [];
  for (const step of ep.steps) {
    const prev = merged[merged.length - 1];
    if (
      prev && !prev.step.ok && prev.step.logical_tool === step.logical_tool &&
      canonicalJson(prev.step.arguments) === canonicalJson(step.arguments)
    ) {
      const code = errorCode(prev.step);
      merged[merged.length - 1] = {
        step,
        attempts: prev.attempts + 1,
        recovered: [...prev.recovered, code ?? "error"],
      };
      continue;
    }
    merged.push({ step, attempts: 1, recovered: [] });
  }
  // 2. Drop noise: keep what changes state, and what a kept step uses.
  const used = new Set<string>();
  const keep = new Array<boolean>(merged.length).fill(false);
  for (let i = merged.length - 1; i >= 0; i--) {
    const s = merged[i].step;
    if (
      changesState(effects, s.logical_tool) ||
      (s.store !== null && used.has(s.store))
    ) {
      keep[i] = true;
      for (const src of Object.values(s.arg_lineage)) {
        for (const store of referencedStores(src)) used.add(store);
      }
    }
  }
  return merged.filter((_, i) => keep[i]);
}
