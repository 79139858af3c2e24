/**
 * Replay of a recorded episode through the agent form ({@linkcode
 * AgentEngine}), with the episode's own results standing in for the tools
 * and the agent's own calls standing in for the model. Used by the
 * verifier (every training episode) and by the evaluation (held-out
 * episodes), so both judge the same way.
 *
 * Per step of the episode, the verdict is:
 * - `lookup`: a read the package had already made (no model call);
 * - `model`: a read the model still has to ask for;
 * - `choice`: a state-changing call the choice leaf allows (one model
 *   call, scored as if the model answered as the agent did);
 * - `stop`: a state-changing call the choice leaf refuses (the package
 *   stops: never wrong, never made);
 * - `after_stop`: anything after a stop.
 *
 * A lookup's result is the episode's own result for the same call between
 * the same writes; a lookup the episode never made in that span has no
 * known result (it counts as an extra lookup and feeds nothing).
 *
 * @module
 */
import type { LeafMemo } from "./call_leaves.ts";
import { canonicalJson } from "../../trace/canonical_json.ts";
import type { NormEpisode } from "../../lineage/records.ts";
import type { BehaviorIr } from "../../package/ir.ts";
import { AgentEngine } from "./agent_engine.ts";
import type { WordsMemo } from "./user_words.ts";
import { changesState, type Effects } from "../../package/tool_effects.ts";

/** The verdict on one step. */
export type StepVerdict = "lookup" | "model" | "choice" | "stop" | "after_stop";

/** What a replay found. */
export interface AgentReplay {
  /** Episode id. */
  episode_id: string;
  /** A verdict per step. */
  verdicts: StepVerdict[];
  /** Why it stopped, when it did. */
  stop_reason: string | null;
  /** Lookups made. */
  lookups: number;
  /** Lookups the episode did not make between the same writes. */
  extra_lookups: number;
  /** Per lookup node: calls made and calls the episode used. */
  by_node: Record<string, { issued: number; used: number }>;
  /** Times a node's candidates passed its fan-out cap. */
  capped: number;
  /** The same, by lookup node id. */
  capped_by_node: Record<string, number>;
  /** State-changing calls the package made that the episode did not. */
  wrong: number;
  /** For every argument of every allowed choice: how many candidates it had. */
  choice_candidates: number[];
}

function key(epoch: number, tool: string, args: unknown): string {
  return `${epoch}\u0000${tool}\u0000${canonicalJson(args)}`;
}

// One walk of the episode that feeds the engine and tallies every measure as it goes.
/**
 * Replay one episode.
 *
 * @param ir An agent-form IR.
 * @param options The episode, effects (which tools change state), fan-out
 *   cap, messages already cut into words, results already walked.
 * @returns Verdicts and lookup counts.
 */
export function replayAgent(
  ir: BehaviorIr,
  options: {
    episode: NormEpisode;
    effects: Effects;
    fanout?: number;
    words?: WordsMemo;
    leaves?: LeafMemo;
  },
): AgentReplay {
  const ep = options.episode;
  const engine = new AgentEngine(ir, {
    fanout: options.fanout,
    words: options.words,
    leaves: options.leaves,
  });
  const writes = (tool: string) => changesState(options.effects, tool);
  // The episode's calls by (writes before, tool, arguments).
  const recorded = new Map<string, number>();
  let epoch = 0;
  ep.steps.forEach((s, i) => {
    const k = key(epoch, s.logical_tool, s.arguments);
    if (!recorded.has(k)) recorded.set(k, i);
    if (writes(s.logical_tool)) epoch++;
  });
  const out: AgentReplay = {
    episode_id: ep.episode_id,
    verdicts: [],
    stop_reason: null,
    lookups: 0,
    extra_lookups: 0,
    by_node: {},
    capped: 0,
    capped_by_node: {},
    wrong: 0,
    choice_candidates: [],
  };
  const runLookups = () => {
    for (let due = engine.dueLookups(); due.length; due = engine.dueLookups()) {
      for (const c of due) {
        const k = key(engine.epoch, c.tool, c.args);
        const at = recorded.get(k);
        const node = (out.by_node[c.node] ??= { issued: 0, used: 0 });
        node.issued++;
        out.lookups++;
        if (at === undefined) {
          out.extra_lookups++;
          engine.record(
            { tool: c.tool, args: c.args, ok: false, result: null },
            "lookup",
            {
              unknown: true,
            },
          );
          continue;
        }
        node.used++;
        const s = ep.steps[at];
        engine.record(
          { tool: c.tool, args: c.args, ok: s.ok, result: s.result },
          "lookup",
        );
      }
    }
  };
  let users = 0;
  let stopped = false;
  for (const s of ep.steps) {
    const said = ((s.state_before.input ?? {}) as { user?: string[] }).user ??
      [];
    while (users < said.length) {
      engine.user(said[users++]);
      if (!stopped) runLookups();
    }
    if (stopped) {
      out.verdicts.push("after_stop");
      continue;
    }
    const call = {
      tool: s.logical_tool,
      args: s.arguments,
      ok: s.ok,
      result: s.result,
    };
    if (writes(s.logical_tool)) {
      const chk = engine.check(s.logical_tool, s.arguments);
      if (!chk.ok) {
        out.verdicts.push("stop");
        out.stop_reason = chk.reason;
        stopped = true;
        continue;
      }
      out.verdicts.push("choice");
      const offered = engine.choiceValues()[s.logical_tool] ?? {};
      for (const v of Object.values(offered)) {
        if (v) out.choice_candidates.push(v.values.length);
      }
      engine.record(call, "choice", { changesState: true });
    } else if (engine.cached(s.logical_tool, s.arguments)) {
      out.verdicts.push("lookup");
      continue;
    } else {
      out.verdicts.push("model");
      engine.record(call, "model");
    }
    runLookups();
  }
  out.capped = engine.capped;
  out.capped_by_node = { ...engine.cappedBy };
  // Lookups of tools that change state would be wrong calls; lookups are
  // made only for read tools, so this stays 0 unless effects disagree.
  out.wrong = engine.calls.filter((c) => c.by === "lookup" && writes(c.tool))
    .length;
  return out;
}
