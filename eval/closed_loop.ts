/**
 * One seed of the closed-loop evaluation: the held-out τ² retail tasks are
 * run for real, (a) by the agent alone and (b) by the agent with the
 * package compiled from the training split, both as live conversations
 * (`Conversation`) through the OpenAI binding over HTTP against a local
 * scripted model server that replays the recorded agent (it decides
 * nothing: it answers with the next recorded step not already satisfied),
 * with the recorded user's messages in order and the retail environment's
 * real tools. A task is solved when the database after the run equals the
 * database after the task's ground-truth actions.
 *
 * Scored, never flattering: every state-changing call a run makes that the
 * recorded episode did not make is wrong; tokens are the server's count of
 * every request (a real tokenizer), so the cost of showing lookups is paid.
 *
 * @module
 */
import { canonicalJson } from "../lib/trace/canonical_json.ts";
import { compileBehavior } from "../lib/compiler/compile_behavior.ts";
import type { BehaviorPackage } from "../lib/package/package.ts";
import { changesState, type Effects } from "../lib/package/tool_effects.ts";
import { declareTool } from "../lib/tool_gateway/parameters.ts";
import { Conversation } from "../lib/forms/mod.ts";
import type { ToolRegistry } from "../lib/runtime/runtime_types.ts";
import type { ChatModel, ChatTool } from "../lib/models/chat_types.ts";
import { RetailEnv, taskSolved } from "./envs/tau2/mod.ts";
import { type Script, scriptFromTau2 } from "./scripted_model.ts";
import type { ScriptedModelServer } from "./scripted_model_server.ts";
import { splitFor } from "./split_eval.ts";
import type { EvalEpisode, TauData } from "./tau_data.ts";
import { formOf } from "../lib/forms/form_table.ts";

/** What one arm did on one episode. */
export interface ArmResult {
  /** The task was solved (database rule). */
  solved: boolean;
  /** How the conversation ended (`completed`, `stopped`, `error: …`). */
  status: string;
  /** Model requests. */
  requests: number;
  /** Prompt tokens (server count). */
  prompt_tokens: number;
  /** Completion tokens (server count). */
  completion_tokens: number;
  /** State-changing calls made that the episode did not make. */
  wrong: number;
  /** Lookups whose call the episode never made. */
  extra_lookups: number;
  /** Lookups made. */
  lookups: number;
  /** Choices refused. */
  refused: number;
  /** Wall time, ms. */
  ms: number;
}

/** One held-out episode, both arms. */
export interface LoopEpisode {
  /** Episode id. */
  id: string;
  /** The recorded reward was 1. */
  recorded_success: boolean;
  /** The agent alone. */
  agent: ArmResult;
  /** The agent with the package. */
  package: ArmResult;
}

/** One seed. */
export interface LoopSeed {
  /** Split seed. */
  seed: number;
  /** Training episodes compiled. */
  train: number;
  /** Lookup nodes kept. */
  lookups: string[];
  /** Per held-out episode. */
  episodes: LoopEpisode[];
}

/** What the closed loop needs besides the data. */
export interface LoopSetup {
  /** The retail database (never mutated). */
  db: unknown;
  /** Tool schemas shown to the model. */
  schemas: ChatTool[];
  /** Instructions (the domain policy). */
  instructions: string;
  /** The raw simulations, in file order (aligned with `data.episodes`). */
  simulations: unknown[];
  /** The scripted model server. */
  server: ScriptedModelServer;
  /** A chat model for a script's base URL. */
  openChat: (baseUrl: string) => ChatModel;
}

const USER_END = /###(STOP|TRANSFER|OUT-OF-SCOPE)###/;

function envTools(env: RetailEnv): ToolRegistry {
  return Object.fromEntries(
    Object.entries(env.tools).map(([name, fn]) => [
      name,
      declareTool(fn as (args: Record<string, unknown>) => unknown, "object"),
    ]),
  );
}

function callKey(tool: string, args: unknown): string {
  return `${tool}\u0000${canonicalJson(args ?? {})}`;
}

async function runArm(
  pkg: BehaviorPackage | null,
  e: EvalEpisode,
  script: Script,
  baseUrl: string,
  setup: LoopSetup,
  effects: Effects,
): Promise<ArmResult> {
  setup.server.resetScript(script.id);
  const before = setup.server.stats(script.id);
  const env = new RetailEnv(
    setup.db as ConstructorParameters<typeof RetailEnv>[0],
  );
  const conv = new Conversation(pkg, {
    tools: envTools(env),
    schemas: setup.schemas,
    instructions: setup.instructions,
  }, { model: setup.openChat(baseUrl) });
  const t0 = performance.now();
  let status = "completed";
  try {
    for (const u of script.users) {
      if (USER_END.test(u)) break;
      const turn = await conv.user(u);
      if (turn.status === "stopped") {
        const why = conv.calls.find((c) => c.by === "refused")?.reason;
        status = `stopped: ${turn.reason}${why ? ` (first: ${why})` : ""}`;
        break;
      }
    }
  } catch (err) {
    status = `error: ${(err as Error).message}`;
  }
  const ms = performance.now() - t0;
  const recorded = new Map<string, number>();
  const recordedAll = new Set<string>();
  for (const s of e.norm.steps) {
    const k = callKey(s.logical_tool, s.arguments);
    recordedAll.add(k);
    if (changesState(effects, s.logical_tool)) {
      recorded.set(k, (recorded.get(k) ?? 0) + 1);
    }
  }
  let wrong = 0;
  let extra = 0;
  for (const c of conv.calls) {
    if (c.by === "refused" || c.args === null) continue;
    const k = callKey(c.tool, c.args);
    if (c.by === "lookup" && !recordedAll.has(k)) extra++;
    if (c.by === "model" && changesState(effects, c.tool)) {
      const left = recorded.get(k) ?? 0;
      if (left > 0) recorded.set(k, left - 1);
      else wrong++;
    }
  }
  const after = setup.server.stats(script.id);
  const stats = {
    requests: after.requests - before.requests,
    prompt_tokens: after.prompt_tokens - before.prompt_tokens,
    completion_tokens: after.completion_tokens - before.completion_tokens,
  };
  const truth = e.truth.map((a) => ({ name: a.name, arguments: a.arguments }));
  return {
    solved: truth.length > 0 &&
      taskSolved({
        initialDb: setup.db as never,
        finalDb: env.db,
        actions: truth,
      }).solved,
    status,
    requests: stats.requests,
    prompt_tokens: stats.prompt_tokens,
    completion_tokens: stats.completion_tokens,
    wrong,
    extra_lookups: extra,
    lookups: conv.stats.lookups,
    refused: conv.stats.refused,
    ms,
  };
}

/** Which seed {@linkcode closedLoopSeed} runs, and on what. */
export interface LoopSeedRun {
  /** Split seed. */
  seed: number;
  /** Database, schemas, the server, the model binding. */
  setup: LoopSetup;
  /** Judge on a validation part of the training split (for tuning). */
  validate?: boolean;
}

/**
 * Run one seed: compile from the training split's successful episodes,
 * then every held-out episode with a known task through both arms.
 *
 * @param data The loaded τ² file.
 * @param run The seed, the loop's setup, and whether to validate.
 * @returns Per-episode results.
 * @throws {Error} When the compiler chose a form that is not a conversation (the loop runs conversations).
 */
export async function closedLoopSeed(
  data: TauData,
  run: LoopSeedRun,
): Promise<LoopSeed> {
  const { seed, setup } = run;
  const { train, held } = splitFor(data.episodes, seed, run);
  const trainOk = train.filter((e) => e.norm.success === true);
  const result = compileBehavior(trainOk.map((e) => e.norm), {
    name: "tau",
    effects: data.effects,
  });
  const pkg = result.package;
  const form = formOf(pkg.ir);
  if (!form.conversation) {
    throw new Error(
      `seed ${seed}: the compiler chose the ${form.name} form; the closed loop runs conversations`,
    );
  }
  const index = new Map(data.episodes.map((e, i) => [e.id, i]));
  const out: LoopSeed = {
    seed,
    train: trainOk.length,
    lookups: form.lookups(pkg.ir),
    episodes: [],
  };
  for (const e of held) {
    if (!e.truth.length) continue;
    const sim = setup.simulations[index.get(e.id)!];
    const script = scriptFromTau2(sim as Parameters<typeof scriptFromTau2>[0]);
    const baseUrl = setup.server.addScript(script);
    const agent = await runArm(null, e, script, baseUrl, setup, data.effects);
    const withPkg = await runArm(pkg, e, script, baseUrl, setup, data.effects);
    out.episodes.push({
      id: e.id,
      recorded_success: e.norm.success === true,
      agent,
      package: withPkg,
    });
  }
  return out;
}
