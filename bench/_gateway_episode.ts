/**
 * One τ² retail episode through one arm of the gateway loop: the recorded
 * user and the scripted upstream, an unmodified agent loop on an official
 * client (`_retail_agents.ts`: no header of ours; the capture is the arm's
 * active one, the episode the one its answers name), the model gateway
 * between them (recording only, or serving a package), and what the run
 * did, scored as the closed
 * loop scores it (`eval/closed_loop.ts`): solved by τ²'s database rule,
 * every state-changing call the episode did not make is wrong, tokens are
 * the upstream's count.
 *
 * @module
 */
import type OpenAI from "openai";
import { canonicalJson } from "../lib/trace/canonical_json.ts";
import { changesState, type Effects } from "../lib/package/tool_effects.ts";
import { taskSolved } from "../eval/envs/tau2/mod.ts";
import type { Script } from "../eval/scripted_model.ts";
import type { ScriptStats } from "../eval/scripted_model_server.ts";
import type { EvalEpisode } from "../eval/tau_data.ts";
import type { IngestServer } from "../lib/ingest/server.ts";
import type { AnthropicClient } from "./_anthropic_sdk.ts";
import type { UpstreamMeter } from "./_upstream_meter.ts";
import {
  type AgentRun,
  runChatAgent,
  runMessagesAgent,
} from "./_retail_agents.ts";

/** The wire an episode runs on. */
export type LoopWire = "openai" | "anthropic";

/** One arm: a gateway, its clients and the upstream script it reads. */
export interface Arm {
  /** The ingest server whose model gateway the agent talks to. */
  server: IngestServer;
  /** The OpenAI client (base URL the gateway's `/v1`). */
  openai: OpenAI;
  /** The Anthropic client (base URL the gateway's), once loaded. */
  anthropic: AnthropicClient | null;
  /** The upstream script id this arm's gateway forwards to. */
  scriptId: string;
}

/** The scripted upstreams (one per wire), as the arms see them. */
export interface Upstreams {
  /** Replace the arm's script before an episode. */
  addScript(wire: LoopWire, script: Script): void;
  /** The upstream's counts of a script id. */
  stats(wire: LoopWire, id: string): ScriptStats;
}

/** What one arm did on one episode. */
export interface ArmResult {
  /** The task was solved (τ²'s database rule). */
  solved: boolean;
  /** How the run ended (`user_end`, `script_end`, `users_done`, `error: …`). */
  status: string;
  /** Requests the agent sent to the gateway. */
  agent_requests: number;
  /** Requests the upstream answered. */
  upstream_requests: number;
  /** Prompt tokens (the upstream's count). */
  prompt_tokens: number;
  /** Completion tokens (the upstream's count). */
  completion_tokens: number;
  /** Of the prompt tokens, the tool definitions sent (the meter's count). */
  tools_tokens: number;
  /** Of the prompt tokens, the package's lookups shown again (the meter's count). */
  served_tokens: number;
  /** State-changing calls made that the episode did not make. */
  wrong: number;
  /** Answers the package made itself (its lookups). */
  served_answers: number;
  /** Tool calls in those answers. */
  lookups: number;
  /** Of them, calls the recorded episode never made. */
  extra_lookups: number;
  /** State-changing calls of the model the package refused. */
  refusals: number;
  /** Answers in words after three refused attempts. */
  gave_up: number;
  /** What those answers said. */
  gave_up_texts: string[];
  /** Requests the package did not fit (forwarded untouched). */
  passed_through: number;
  /** Why the last one did not fit. */
  last_pass_through: string | null;
  /** The episodes the run's answers named (one, unless the gateway split it). */
  episodes: string[];
  /** Answers that named no episode. */
  unnamed: number;
  /** Wall time, ms. */
  ms: number;
}

/** What τ²-bench's orchestrator has the agent say first. */
export const TAU2_GREETING = "Hi! How can I help you today?";

const callKey = (tool: string, args: unknown) =>
  `${tool}\u0000${canonicalJson(args ?? {})}`;

/** Context of one episode. */
export interface EpisodeContext {
  /** The retail database (never mutated). */
  db: unknown;
  /** The system prompt. */
  instructions: string;
  /** Tool effects (what changes state). */
  effects: Effects;
  /** The scripted upstreams. */
  upstreams: Upstreams;
  /** The meter the gateways reach them through. */
  meter: UpstreamMeter;
}

/** Which episode, through which arm and wire (the arm's active capture records it). */
export interface EpisodeRun {
  /** The arm. */
  arm: Arm;
  /** Which client and route. */
  wire: LoopWire;
  /** Streamed answers. */
  stream: boolean;
  /** The evaluated episode (its steps and ground truth). */
  episode: EvalEpisode;
  /** Its script (the recorded agent and user). */
  script: Script;
}

/**
 * Run one episode through one arm.
 *
 * @param ctx Database, prompt, effects, upstreams, meter.
 * @param run Arm, wire, episode, script, capture.
 * @returns What the arm did.
 */
export async function runEpisode(
  ctx: EpisodeContext,
  run: EpisodeRun,
): Promise<ArmResult> {
  const { arm, wire, episode: e, script } = run;
  const gw = arm.server.modelGateway!.stats;
  const g0 = {
    served: gw.served ?? 0,
    refusals: gw.refusals ?? 0,
    gave_up: gw.gave_up ?? 0,
    passed: gw.passed_through ?? 0,
  };
  ctx.upstreams.addScript(wire, { ...script, id: arm.scriptId });
  const u0 = ctx.upstreams.stats(wire, arm.scriptId);
  const m0 = ctx.meter.stats(arm.scriptId);
  const options = {
    db: ctx.db,
    users: script.users,
    instructions: ctx.instructions,
    greeting: script.greeting ?? TAU2_GREETING,
    stream: run.stream,
  };
  const t0 = performance.now();
  let agent: AgentRun | null = null;
  let status: string;
  try {
    agent = wire === "openai"
      ? await runChatAgent(arm.openai, options)
      : await runMessagesAgent(arm.anthropic!, options);
    status = agent.ended;
  } catch (err) {
    status = `error: ${(err as Error).message}`;
  }
  const ms = performance.now() - t0;
  const u1 = ctx.upstreams.stats(wire, arm.scriptId);
  const m1 = ctx.meter.stats(arm.scriptId);
  const recorded = new Map<string, number>();
  const recordedAll = new Set<string>();
  for (const s of e.norm.steps) {
    const k = callKey(s.logical_tool, s.arguments);
    recordedAll.add(k);
    if (changesState(ctx.effects, s.logical_tool)) {
      recorded.set(k, (recorded.get(k) ?? 0) + 1);
    }
  }
  let wrong = 0;
  let lookups = 0;
  let extra = 0;
  for (const c of agent?.calls ?? []) {
    const k = callKey(c.name, c.arguments);
    if (c.served) {
      lookups++;
      if (!recordedAll.has(k)) extra++;
    }
    if (changesState(ctx.effects, c.name)) {
      const left = recorded.get(k) ?? 0;
      if (left > 0) recorded.set(k, left - 1);
      else wrong++;
    }
  }
  const truth = e.truth.map((a) => ({ name: a.name, arguments: a.arguments }));
  return {
    solved: agent !== null && truth.length > 0 &&
      taskSolved({
        initialDb: ctx.db as never,
        finalDb: agent.env.db,
        actions: truth,
      }).solved,
    status,
    agent_requests: agent?.requests ?? 0,
    upstream_requests: u1.requests - u0.requests,
    prompt_tokens: u1.prompt_tokens - u0.prompt_tokens,
    completion_tokens: u1.completion_tokens - u0.completion_tokens,
    tools_tokens: m1.tools - m0.tools,
    served_tokens: m1.served - m0.served,
    wrong,
    served_answers: (gw.served ?? 0) - g0.served,
    lookups,
    extra_lookups: extra,
    refusals: (gw.refusals ?? 0) - g0.refusals,
    gave_up: (gw.gave_up ?? 0) - g0.gave_up,
    gave_up_texts: agent?.gave_up ?? [],
    passed_through: (gw.passed_through ?? 0) - g0.passed,
    last_pass_through: (gw.passed_through ?? 0) > g0.passed
      ? gw.last_pass_through ?? null
      : null,
    episodes: agent?.episodes ?? [],
    unnamed: agent?.unnamed ?? 0,
    ms,
  };
}
