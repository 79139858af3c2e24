/**
 * The closed loop's figures: one row per split seed, the held-out totals
 * over all seeds, and the environment port's replay check.
 *
 * @module
 */
import type { LoopSeed } from "../eval/closed_loop.ts";
import type { replayCheck } from "../eval/envs/tau2/mod.ts";

const r2 = (x: number) => Math.round(x * 100) / 100;
const r4 = (x: number) => Math.round(x * 10000) / 10000;

/**
 * One split seed's figures, agent alone against agent with the package.
 *
 * @param s The seed's episodes.
 * @returns Its row of the report.
 */
export function seedSummary(s: LoopSeed) {
  const eps = s.episodes;
  const n = Math.max(1, eps.length);
  const sum = (f: (e: LoopSeed["episodes"][number]) => number) =>
    eps.reduce((a, e) => a + f(e), 0);
  const agentSolved = eps.filter((e) => e.agent.solved);
  const both = agentSolved.filter((e) => e.package.solved).length;
  return {
    seed: s.seed,
    train: s.train,
    tasks: eps.length,
    solved: {
      agent: agentSolved.length,
      package: eps.filter((e) => e.package.solved).length,
      package_of_agent: agentSolved.length ? r4(both / agentSolved.length) : 1,
    },
    wrong: {
      agent: sum((e) => e.agent.wrong),
      package: sum((e) => e.package.wrong),
    },
    model_calls_per_episode: {
      agent: r2(sum((e) => e.agent.requests) / n),
      package: r2(sum((e) => e.package.requests) / n),
    },
    tokens_per_episode: {
      agent: {
        prompt: Math.round(sum((e) => e.agent.prompt_tokens) / n),
        completion: Math.round(sum((e) => e.agent.completion_tokens) / n),
      },
      package: {
        prompt: Math.round(sum((e) => e.package.prompt_tokens) / n),
        completion: Math.round(sum((e) => e.package.completion_tokens) / n),
      },
    },
    extra_lookups_per_episode: r2(sum((e) => e.package.extra_lookups) / n),
    lookups_per_episode: r2(sum((e) => e.package.lookups) / n),
    refused_choices: sum((e) => e.package.refused),
    stopped: eps.filter((e) => e.package.status !== "completed").map((e) =>
      `${e.id}: ${e.package.status}`
    ),
    wall_ms: {
      agent: Math.round(sum((e) => e.agent.ms)),
      package: Math.round(sum((e) => e.package.ms)),
    },
    lookup_nodes: s.lookups,
  };
}

/** One seed's row of the report. */
export type SeedRow = ReturnType<typeof seedSummary>;

/** Smallest and largest of some numbers. */
export interface Range {
  /** The smallest. */
  min: number;
  /** The largest. */
  max: number;
}

function range(xs: number[]): Range {
  return { min: Math.min(...xs), max: Math.max(...xs) };
}

/** The held-out figures over all seeds. */
export interface LoopHeldout {
  /** Held-out tasks over all seeds. */
  tasks: number;
  /** Tasks solved by each arm, and the package's share of the agent's. */
  solved: { agent: number; package: number; package_of_agent: Range };
  /** Wrong state-changing calls of the package, worst seed. */
  wrong: { max: number };
  /** Model requests per episode, and package / agent per seed. */
  model_calls_per_episode: { agent: number; package: number; ratio: Range };
  /** Tokens per episode, and the prompt's package / agent per seed. */
  tokens_per_episode: {
    agent: { prompt: number; completion: number };
    package: { prompt: number; completion: number };
    prompt_ratio: Range;
  };
  /** Extra lookups per episode, worst seed. */
  extra_lookups_per_episode: { max: number };
  /** Refused choices over all seeds. */
  refused_choices: number;
}

/**
 * The held-out figures over all seeds.
 *
 * @param rows One row per seed.
 * @param n How many seeds.
 * @returns Totals, per-episode means and per-seed ranges.
 */
export function heldoutSummary(rows: SeedRow[], n: number): LoopHeldout {
  const sum = (f: (r: SeedRow) => number) => rows.reduce((a, r) => a + f(r), 0);
  const ratio = (a: number, b: number) => (a ? r4(b / a) : 0);
  return {
    tasks: sum((r) => r.tasks),
    solved: {
      agent: sum((r) => r.solved.agent),
      package: sum((r) => r.solved.package),
      package_of_agent: range(rows.map((r) => r.solved.package_of_agent)),
    },
    wrong: { max: Math.max(...rows.map((r) => r.wrong.package)) },
    model_calls_per_episode: {
      agent: r2(sum((r) => r.model_calls_per_episode.agent) / n),
      package: r2(sum((r) => r.model_calls_per_episode.package) / n),
      ratio: range(
        rows.map((r) =>
          ratio(
            r.model_calls_per_episode.agent,
            r.model_calls_per_episode.package,
          )
        ),
      ),
    },
    tokens_per_episode: {
      agent: {
        prompt: Math.round(sum((r) => r.tokens_per_episode.agent.prompt) / n),
        completion: Math.round(
          sum((r) => r.tokens_per_episode.agent.completion) / n,
        ),
      },
      package: {
        prompt: Math.round(
          sum((r) => r.tokens_per_episode.package.prompt) / n,
        ),
        completion: Math.round(
          sum((r) => r.tokens_per_episode.package.completion) / n,
        ),
      },
      prompt_ratio: range(
        rows.map((r) =>
          ratio(
            r.tokens_per_episode.agent.prompt,
            r.tokens_per_episode.package.prompt,
          )
        ),
      ),
    },
    extra_lookups_per_episode: {
      max: Math.max(...rows.map((r) => r.extra_lookups_per_episode)),
    },
    refused_choices: sum((r) => r.refused_choices),
  };
}

/** The environment port's replay check, as reported. */
export interface EnvReplay {
  /** Successful matched episodes replayed. */
  episodes: number;
  /** Their calls. */
  calls: number;
  /** Calls that gave the recorded result. */
  reproduced: number;
  /** reproduced / calls. */
  rate: number;
  /** Episodes that solve their task by the database rule. */
  solved: number;
  /** Time the replay took. */
  ms: number;
  /** The first ten mismatches. */
  mismatches: ReturnType<typeof replayCheck>["mismatches"];
}

/**
 * The replay check's figures.
 *
 * @param replay What `replayCheck` found.
 * @param ms How long it took.
 * @returns The report's `env_replay` section.
 */
export function envReplaySummary(
  replay: ReturnType<typeof replayCheck>,
  ms: number,
): EnvReplay {
  return {
    episodes: replay.episodes,
    calls: replay.calls,
    reproduced: replay.reproduced_calls,
    rate: replay.calls ? r4(replay.reproduced_calls / replay.calls) : 0,
    solved: replay.solved,
    ms: Math.round(ms),
    mismatches: replay.mismatches.slice(0, 10),
  };
}
