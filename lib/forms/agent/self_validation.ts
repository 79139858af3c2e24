/**
 * The agent form judged on its own training data before it ships, by
 * cross-validation: the training episodes are split into four folds (by a
 * stable hash of their ids), and each fold is replayed through a form
 * built from the other three with the same options (`replayAgent`, the
 * verifier's and the evaluation's engine). Every training episode is thus
 * judged once by a form that never saw it. What it measures is what a user
 * of the package pays or saves against the agent alone: calls the model no
 * longer has to make, extra lookups, and conversations the package would
 * stop by refusing a state-changing call the agent made and the episode
 * shows was right.
 *
 * The package that ships is built from every training episode; this is the
 * estimate of how it does on conversations it has not seen. Where the
 * lookups saved nothing they are dropped (`compile_agent.ts`); where the
 * choice leaf stopped conversations, the report says so with the first
 * reasons. The same measure picks the tuning parameters
 * (`self_tuning.ts`).
 *
 * @module
 */
import type { NormEpisode } from "../../lineage/records.ts";
import { type AgentFormOptions, buildAgentForm } from "./build_agent_form.ts";
import { replayAgent } from "./agent_replay.ts";
import type { SelfValidation } from "../../package/verification.ts";

/** Fewest training episodes with which the form is cross-validated. */
export const MIN_VALIDATION_EPISODES = 8;

/** Folds of the cross-validation: each holds out about a quarter. */
export const VALIDATION_FOLDS = 4;

/** FNV-1a of a string: a stable, platform-independent split. */
function hash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/**
 * The fold an episode is held out in: FNV-1a of its id, modulo
 * {@linkcode VALIDATION_FOLDS} (stable across platforms and runs).
 *
 * @param episodeId The episode id.
 * @returns 0 to {@linkcode VALIDATION_FOLDS} − 1.
 */
export function foldOf(episodeId: string): number {
  return hash(episodeId) % VALIDATION_FOLDS;
}

/**
 * Cross-validate the agent form: each of {@linkcode VALIDATION_FOLDS}
 * folds of the training episodes is replayed through a form built from the
 * others.
 *
 * @param episodes Normalized training episodes.
 * @param options The agent form's options (the same as the shipped form's).
 * @returns The measures over every fold, or null with fewer than
 *   {@linkcode MIN_VALIDATION_EPISODES} episodes.
 */
export function validateAgentForm(
  episodes: NormEpisode[],
  options: AgentFormOptions,
): SelfValidation | null {
  if (episodes.length < MIN_VALIDATION_EPISODES) return null;
  const sorted = [...episodes].sort((a, b) =>
    a.episode_id < b.episode_id ? -1 : a.episode_id > b.episode_id ? 1 : 0
  );
  const fold = (e: NormEpisode) => foldOf(e.episode_id);
  const out: SelfValidation = {
    folds: 0,
    fit_episodes: episodes.length,
    episodes: 0,
    calls: 0,
    served: 0,
    extra_lookups: 0,
    stopped: 0,
    stop_reasons: [],
    verdict: "pays",
  };
  for (let f = 0; f < VALIDATION_FOLDS; f++) {
    const held = sorted.filter((e) => fold(e) === f);
    const fit = sorted.filter((e) => fold(e) !== f);
    if (!held.length) continue;
    const form = buildAgentForm(fit, options);
    out.folds++;
    out.fit_episodes = Math.min(out.fit_episodes, fit.length);
    for (const ep of held) {
      const r = replayAgent(form.compiled.ir, {
        episode: ep,
        effects: options.effects,
        fanout: options.fanout,
        words: options.memo?.words,
        leaves: options.memo?.leaves,
      });
      out.episodes++;
      out.calls += r.verdicts.length;
      out.served += r.verdicts.filter((v) => v === "lookup").length;
      out.extra_lookups += r.extra_lookups;
      if (r.stop_reason) {
        out.stopped++;
        if (out.stop_reasons.length < 3) {
          out.stop_reasons.push(`${ep.episode_id}: ${r.stop_reason}`);
        }
      }
    }
  }
  out.verdict = out.stopped
    ? "stops conversations"
    : out.served === 0
    ? "saves nothing"
    : "pays";
  return out;
}
