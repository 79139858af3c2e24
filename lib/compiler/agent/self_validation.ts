/**
 * The agent form judged on a validation part of its own training data,
 * before it ships: a quarter of the training episodes (by a stable hash of
 * their ids) is held out, the form is built from the rest, and the held-out
 * episodes are replayed through it (`replayAgent`, the verifier's and the
 * evaluation's engine). What it measures is what a user of the package pays
 * or saves against the agent alone: calls the model no longer has to make,
 * extra lookups, and conversations the package would stop by refusing a
 * state-changing call the agent made and the episode shows was right.
 *
 * The package that ships is built from every training episode; this is the
 * estimate of how it does on conversations it has not seen. Where the
 * lookups saved nothing on validation they are dropped (`compile_agent.ts`);
 * where the choice leaf stopped validation conversations, the report says so
 * with the first reasons.
 *
 * @module
 */
import type { NormEpisode } from "../../lineage/records.ts";
import { type AgentFormOptions, buildAgentForm } from "./agent_form.ts";
import { replayAgent } from "./agent_replay.ts";
import type { SelfValidation } from "../core/verification.ts";

/** Fewest training episodes with which a quarter is held out. */
export const MIN_VALIDATION_EPISODES = 8;

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
 * Build the agent form on three quarters of the training episodes and
 * replay the other quarter through it.
 *
 * @param episodes Normalized training episodes.
 * @param options The agent form's options (the same as the shipped form's).
 * @returns The measures, or null with fewer than
 *   {@linkcode MIN_VALIDATION_EPISODES} episodes or no episode on one side.
 */
export function validateAgentForm(
  episodes: NormEpisode[],
  options: AgentFormOptions,
): SelfValidation | null {
  if (episodes.length < MIN_VALIDATION_EPISODES) return null;
  const held = episodes.filter((e) => hash(e.episode_id) % 4 === 0);
  const fit = episodes.filter((e) => hash(e.episode_id) % 4 !== 0);
  if (held.length < 2 || fit.length < 2) return null;
  const form = buildAgentForm(fit, options);
  const out: SelfValidation = {
    fit_episodes: fit.length,
    episodes: held.length,
    calls: 0,
    served: 0,
    extra_lookups: 0,
    stopped: 0,
    stop_reasons: [],
    verdict: "pays",
  };
  for (const ep of held) {
    const r = replayAgent(form.compiled.ir, ep, {
      effects: options.effects,
      fanout: options.fanout,
    });
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
  out.verdict = out.stopped
    ? "stops conversations"
    : out.served === 0
    ? "saves nothing"
    : "pays";
  return out;
}
