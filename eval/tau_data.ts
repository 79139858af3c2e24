/**
 * τ-bench and τ²-bench trajectory files for the evaluation: episodes
 * (imported, sealed, normalized), assistant turns per call, the tool
 * effects of the domain, and ground-truth actions per episode (through a
 * task-match file when the file's own task ids are wrong). User-side tool
 * calls (dual control, τ² telecom) are counted apart: they are neither
 * steps nor assistant turns. The effects are
 * what `compile.ts` would use for the same file imported without
 * `--effects`: `resolveEffects` over the imported episodes (τ²'s declared
 * tool types for its domain, else read-only names guessed, else unknown).
 *
 * @module
 */
import { HashChainer } from "../lib/trace/chain.ts";
import {
  convertTrajectories,
  type ImportFormat,
} from "../lib/importers/trajectories.ts";
import type { Episode, NormEpisode } from "../lib/lineage/records.ts";
import { isUserSideCall, normalizeEpisode } from "../lib/lineage/normalize.ts";
import type { Effects } from "../lib/package/tool_effects.ts";
import {
  type EffectsResolution,
  resolveEffects,
} from "../lib/compiler/effects.ts";

/** A ground-truth action. */
export interface TruthAction {
  /** Tool. */
  name: string;
  /** Arguments. */
  arguments: Record<string, unknown>;
}

/** One evaluated episode. */
export interface EvalEpisode {
  /** Episode id. */
  id: string;
  /** The file's task id (the split groups by it). */
  task: string;
  /** The captured episode. */
  episode: Episode;
  /** Normalized. */
  norm: NormEpisode;
  /** Per step: index of the assistant turn that made the call. */
  turnOf: number[];
  /** Assistant turns (a turn with parallel calls is one). */
  turns: number;
  /** Turns that said something to the user. */
  textTurns: Set<number>;
  /** Ground-truth actions (empty when unknown). */
  truth: TruthAction[];
  /** Tool calls the user made on their own device (dual control; never steps). */
  userCalls: number;
}

function turnsOf(
  episode: Episode,
): { turnOf: number[]; turns: number; textTurns: Set<number> } {
  const turnOf: number[] = [];
  const textTurns = new Set<number>();
  let turn = -1;
  let prev: string | null = null;
  for (const ev of episode.events) {
    if (isUserSideCall(ev)) {
      // The user's own device (dual control): not an assistant turn.
      prev = "user";
      continue;
    }
    if (ev.kind === "message" && ev.payload.role === "assistant") {
      turn++;
      textTurns.add(turn);
      prev = "assistant";
      continue;
    }
    if (ev.kind === "tool.call.started") {
      if (prev !== "assistant" && prev !== "started") turn++;
      turnOf.push(turn);
      prev = "started";
      continue;
    }
    if (ev.kind === "message" || ev.kind.startsWith("tool.call.")) {
      prev = ev.kind;
    }
  }
  return { turnOf, turns: turn + 1, textTurns };
}

/** A loaded trajectory file. */
export interface TauData {
  /** Format detected. */
  format: ImportFormat;
  /** Episodes in file order. */
  episodes: EvalEpisode[];
  /** Effects of every tool the file calls or declares. */
  effects: Effects;
  /** Where each effect came from, and the unknown and inferred tools. */
  effects_resolution: EffectsResolution;
  /** Episodes whose ground truth came from a task-match file. */
  matched: number;
}

/**
 * Load a τ-bench (v1) or τ²-bench file.
 *
 * @param text The file's text.
 * @param options The task-match file's text (τ², optional).
 * @returns Episodes, effects and ground truth.
 */
export function loadTauData(
  text: string,
  options: { matchText?: string | null } = {},
): TauData {
  const data = JSON.parse(text);
  const format: ImportFormat = Array.isArray(data) ? "tau-bench" : "tau2";
  // Fixed clock and ids: the same file loads to the same events, so a
  // package compiled from it has the same digest in every process.
  let next = 0;
  const { episodes } = convertTrajectories(text, {
    format,
    captureId: "tau_eval",
    now: () => new Date(0),
    newId: () => `evt_tau_${next++}`,
  });
  const truthByTask = new Map<string, TruthAction[]>();
  const perIndex: (TruthAction[] | null)[] = [];
  if (format === "tau2") {
    for (const t of data.tasks ?? []) {
      truthByTask.set(String(t.id), t.evaluation_criteria?.actions ?? []);
    }
  } else {
    for (const item of data) {
      perIndex.push(
        (item.info?.task?.actions ?? []).map((
          a: { name: string; kwargs?: Record<string, unknown> },
        ) => ({ name: a.name, arguments: a.kwargs ?? {} })),
      );
    }
  }
  let matched = 0;
  const matchOf = new Map<number, string | null>();
  if (options.matchText) {
    const m = JSON.parse(options.matchText) as {
      simulations: { index: number; matched_task_id: string | null }[];
    };
    for (const s of m.simulations) matchOf.set(s.index, s.matched_task_id);
  }
  const out = episodes.map((e, i): EvalEpisode => {
    const chain = new HashChainer();
    const episode: Episode = {
      capture_id: "tau_eval",
      episode_id: e.episode_id,
      events: e.events.map((ev) => chain.seal(ev).event),
    };
    const norm = normalizeEpisode(episode);
    const task = String(
      (episode.events[0].payload.task as { task_id: string }).task_id,
    );
    let truth: TruthAction[] = [];
    if (format === "tau2") {
      const real = matchOf.has(i) ? matchOf.get(i) : task;
      if (matchOf.has(i) && real !== null) matched++;
      truth = real === null || real === undefined
        ? []
        : truthByTask.get(real) ?? [];
    } else truth = perIndex[i] ?? [];
    return {
      id: e.episode_id,
      task,
      episode,
      norm,
      truth,
      userCalls: episode.events.filter((ev) =>
        ev.kind === "tool.call.started" && isUserSideCall(ev)
      ).length,
      ...turnsOf(episode),
    };
  });
  const resolution = resolveEffects(out.map((e) => e.episode));
  return {
    format,
    episodes: out,
    effects: resolution.effects,
    effects_resolution: resolution,
    matched,
  };
}
