/**
 * The agent form ({@linkcode AGENT_FORM}): lookups and a choice leaf
 * around the agent's own model, for conversations. Its node kinds are in
 * `agent_kinds.ts`; it is compiled by `compile_agent.ts`, replayed by
 * `agent_replay.ts`, explained by `agent_explain.ts`, run live as a
 * conversation (`run_conversation.ts` over `Conversation`), served at the
 * model API by `GatewayDriver`. Its own compile options
 * ({@linkcode AgentCompileOptions}) are here.
 *
 * @module
 */
import { assertServable } from "../unservable_error.ts";
import type { NormEpisode } from "../../lineage/records.ts";
import type { BehaviorPackage } from "../../package/package.ts";
import type { Form, ReplayMeasure } from "../form.ts";
import { type AgentReplay, replayAgent } from "./agent_replay.ts";
import type { AgentTuning } from "./build_agent_form.ts";
import { compileAgent } from "./compile_agent.ts";
import { GatewayDriver } from "./gateway_driver.ts";
import { explainAgent } from "./agent_explain.ts";
import { AGENT_KINDS } from "./agent_kinds.ts";
import type { AgentNode } from "./agent_nodes.ts";
import {
  type AgentCapabilities,
  type AgentRunOptions,
  type ConversationRun,
  runConversation,
} from "./run_conversation.ts";

/**
 * The agent form's own compile options: its tuning knobs. Unset ones are
 * chosen by cross-validation on the training episodes when `tune` is on,
 * else their defaults.
 */
export interface AgentCompileOptions extends AgentTuning {
  /**
   * Choose the knobs left unset by cross-validation on the training
   * episodes (`agent/self_tuning.ts`); false: use the defaults.
   * @default true
   */
  tune?: boolean;
}

/**
 * The agent form's own options of a larger options object, and nothing
 * else (to pass them on).
 *
 * @param o Options holding them.
 * @returns Just the knobs.
 */
function agentTuning(o: AgentCompileOptions): AgentCompileOptions {
  const {
    fanout,
    extraLookupBudget,
    minYield,
    adjacentShare,
    speculativeCoverage,
    tune,
  } = o;
  return {
    fanout,
    extraLookupBudget,
    minYield,
    adjacentShare,
    speculativeCoverage,
    tune,
  };
}

/**
 * Describe a conversation for people: its status and its counts.
 *
 * @param r The conversation's result.
 * @param pkg The package.
 * @returns The lines.
 */
function describeConversation(
  r: ConversationRun,
  pkg: BehaviorPackage,
): string[] {
  const s = r.stats;
  const refused = r.refused
    ? ` with ${r.refused} refused call${
      r.refused === 1 ? "" : "s"
    } (not made, whatever the replies say)`
    : "";
  return [
    `conversation with ${pkg.manifest.name}: ${r.status}${refused}${
      r.reason ? ` (${r.reason})` : ""
    }, ${r.turns} user messages`,
    `  model requests: ${s.model_requests} (${s.prompt_tokens} prompt + ${s.completion_tokens} completion tokens)`,
    `  tool calls: ${s.tool_calls} (lookups ${s.lookups}, ${s.lookups_shown} shown; reads served from lookups ${s.served}; writes ${s.writes}; refused ${s.refused})`,
  ];
}

/**
 * A conversation replay as the evaluation measures it: a read the package
 * already made spares the model its turn; every other call keeps it.
 */
function measure(r: AgentReplay, episode: NormEpisode): ReplayMeasure {
  const count = (v: string) => r.verdicts.filter((x) => x === v).length;
  return {
    deterministic: count("lookup"),
    choices: count("choice"),
    model_reads: r.verdicts.flatMap((v, i) =>
      v === "model" ? [episode.steps[i].logical_tool] : []
    ),
    wrong: r.wrong,
    stop_reason: r.stop_reason,
    after_stop: count("after_stop"),
    extra_lookups: r.extra_lookups,
    capped: r.capped,
    choice_candidates: r.choice_candidates,
    model_calls: 0,
    needs_model: r.verdicts.map((v) => v !== "lookup"),
  };
}

const rootOf = (ir: { root: string; nodes: Record<string, unknown> }) =>
  ir.nodes[ir.root] as AgentNode | undefined;

/** The agent form. */
export const AGENT_FORM: Form<
  ConversationRun,
  AgentCompileOptions,
  AgentCapabilities,
  AgentRunOptions
> = {
  name: "agent",
  conversation: true,
  kinds: AGENT_KINDS,
  owns: (ir) => rootOf(ir)?.kind === "agent",
  compile: (normalized, options) => {
    options.onProgress?.("agent form", 0, 1);
    return compileAgent(normalized, {
      name: options.name,
      effects: options.effects,
      ...agentTuning(options),
    });
  },
  replay: (compiled, options) =>
    measure(replayAgent(compiled.ir, options), options.episode),
  lookups: (ir) => rootOf(ir)?.lookups ?? [],
  explain: explainAgent,
  run: runConversation,
  describe: describeConversation,
  serve: (pkg) => {
    assertServable(pkg);
    return new GatewayDriver(pkg);
  },
};
