/**
 * The gateway loop's figures: per seed and over seeds (min–max), the
 * done-when targets beside them and whether each seed meets them, and
 * where arm (b) did worse than arm (a) (the episodes, what the package
 * served or refused), as the JSON report (`_gateway_loop_md.ts` writes it
 * as Markdown).
 *
 * @module
 */
import type { ArmResult, LoopWire } from "./_gateway_episode.ts";

/** One judged episode (held-out, or validation with `--validate`), both arms. */
export interface LoopEpisodeRun {
  /** Episode id. */
  id: string;
  /** The recorded reward was 1. */
  recorded_success: boolean;
  /** (a) the gateway recording only. */
  a: ArmResult;
  /** (b) the gateway serving the package. */
  b: ArmResult;
}

/** One seed on one wire. */
export interface LoopSeedRun {
  /** Split seed. */
  seed: number;
  /** Client and route. */
  wire: LoopWire;
  /** Streamed answers. */
  stream: boolean;
  /** Training tasks run through arm (a). */
  train: number;
  /** Training runs (each task twice). */
  train_runs: number;
  /**
   * How the gateway told the training runs apart with no header: runs,
   * episodes their answers named, runs whose answers named more than one
   * episode (or none), episodes named by more than one run.
   */
  train_identity: {
    runs: number;
    named: number;
    split: number;
    shared: number;
  };
  /** Episodes arm (a)'s training capture holds. */
  train_captured: number;
  /** Of them, marked successful and compiled. */
  train_compiled: number;
  /** Training runs that failed with an error (id → status). */
  train_errors: Record<string, string>;
  /** Lookup nodes of the package. */
  lookups: string[];
  /** `name@digest` (short). */
  package: string;
  /** Training tasks through arm (a), ms. */
  train_ms: number;
  /** Compile time, ms. */
  compile_ms: number;
  /** Exchanges the gateways could not record. */
  record_misses: number;
  /** Judged episodes. */
  episodes: LoopEpisodeRun[];
  /** Wall time of the seed (training, compile, both arms), ms. */
  wall_ms: number;
}

/** One closed-loop seed (bench/out/loop.json), for comparison. */
export interface ClosedLoopRow {
  /** Seed. */
  seed: number;
  /** Requests per episode, package / agent. */
  requests_ratio: number;
  /** Prompt tokens per episode, package / agent. */
  prompt_ratio: number;
  /** Tasks the agent solved that the package solved too. */
  solved_of_agent: number;
}

/** About the run. */
export interface RunInfo {
  /** ISO date and time the run started. */
  date: string;
  /** Data file (short). */
  data: string;
  /** Why the fixture slice was used, or null. */
  fallback: string | null;
  /** Split seeds. */
  seeds: number;
  /** Variants each seed ran (`openai whole`, `anthropic stream` …). */
  variants: string[];
  /** What the figures are judged on. */
  mode: string;
  /** Machine note. */
  machine: string;
  /** Whole run, seconds. */
  wall_s: number;
  /** Upstream per episode: a script replaced vs a server per script. */
  setup: { add_script_ms: number; server_per_script_ms: number };
  /** The closed loop's figures on the same file, when bench/out/loop.json has them. */
  closed_loop?: ClosedLoopRow[] | null;
}

/** The done-when targets. */
export const TARGETS = {
  solved_of_a: 0.95,
  wrong: 0,
  requests_ratio: 0.70,
  prompt_ratio: 0.95,
  seeds: 8,
} as const;

const r2 = (x: number) => Math.round(x * 100) / 100;
const r4 = (x: number) => Math.round(x * 10000) / 10000;

/** A seed's figures. */
export function seedRow(s: LoopSeedRun) {
  const eps = s.episodes;
  const n = Math.max(1, eps.length);
  const sum = (f: (e: LoopEpisodeRun) => number) =>
    eps.reduce((a, e) => a + f(e), 0);
  const per = (f: (e: LoopEpisodeRun) => number) => r2(sum(f) / n);
  const aSolved = eps.filter((e) => e.a.solved);
  const both = aSolved.filter((e) => e.b.solved).length;
  const up = { a: per((e) => e.a.upstream_requests), b: 0, ratio: 0 };
  up.b = per((e) => e.b.upstream_requests);
  const pa = sum((e) => e.a.prompt_tokens);
  const pb = sum((e) => e.b.prompt_tokens);
  const ua = sum((e) => e.a.upstream_requests);
  const ub = sum((e) => e.b.upstream_requests);
  up.ratio = ua ? r4(ub / ua) : 0;
  const row = {
    seed: s.seed,
    wire: s.wire,
    stream: s.stream,
    variant: `${s.wire} ${s.stream ? "stream" : "whole"}`,
    tasks: eps.length,
    train: {
      tasks: s.train,
      runs: s.train_runs,
      captured: s.train_captured,
      compiled: s.train_compiled,
      identity: s.train_identity,
    },
    held_identity: {
      runs: 2 * eps.length,
      split: eps.filter((e) => e.a.episodes.length !== 1 || e.a.unnamed > 0)
        .length +
        eps.filter((e) => e.b.episodes.length !== 1 || e.b.unnamed > 0).length,
    },
    solved: {
      a: aSolved.length,
      b: eps.filter((e) => e.b.solved).length,
      b_of_a: aSolved.length ? r4(both / aSolved.length) : 1,
    },
    wrong: { a: sum((e) => e.a.wrong), b: sum((e) => e.b.wrong) },
    upstream_requests_per_episode: up,
    agent_requests_per_episode: {
      a: per((e) => e.a.agent_requests),
      b: per((e) => e.b.agent_requests),
    },
    prompt_tokens_per_episode: {
      a: Math.round(pa / n),
      b: Math.round(pb / n),
      ratio: pa ? r4(pb / pa) : 0,
    },
    completion_tokens_per_episode: {
      a: Math.round(sum((e) => e.a.completion_tokens) / n),
      b: Math.round(sum((e) => e.b.completion_tokens) / n),
    },
    served_answers: sum((e) => e.b.served_answers),
    lookups_per_episode: per((e) => e.b.lookups),
    extra_lookups_per_episode: per((e) => e.b.extra_lookups),
    refusals: sum((e) => e.b.refusals),
    gave_up: sum((e) => e.b.gave_up),
    passed_through: sum((e) => e.b.passed_through + e.a.passed_through),
    record_misses: s.record_misses,
    lookup_nodes: s.lookups,
    package: s.package,
    wall_s: {
      train: r2(s.train_ms / 1000),
      compile: r2(s.compile_ms / 1000),
      a: r2(sum((e) => e.a.ms) / 1000),
      b: r2(sum((e) => e.b.ms) / 1000),
      seed: r2(s.wall_ms / 1000),
    },
    prompt_parts: {
      tools_per_request: { a: 0, b: 0 },
      tools_per_episode: { a: 0, b: 0 },
      lookups_shown_per_episode: 0,
      rest_per_episode: { a: 0, b: 0 },
      ratio_with_a_tools: 0,
    },
    targets: {
      solved: false,
      wrong: false,
      requests: false,
      prompt: false,
      identity: false,
    },
    met: false,
    worse: eps.filter((e) => e.a.solved && !e.b.solved).map((e) =>
      `${e.id}: ${e.b.status}${
        e.b.gave_up_texts.length ? `; gave up: ${e.b.gave_up_texts[0]}` : ""
      }`
    ),
    gave_up_episodes: eps.filter((e) => e.b.gave_up > 0).map((e) =>
      `${e.id} (a ${e.a.solved ? "solved" : "not solved"}, b ${
        e.b.solved ? "solved" : "not solved"
      }): ${e.b.gave_up_texts.join(" | ")}`
    ),
    errors: eps.flatMap((e) =>
      (["a", "b"] as const).filter((arm) => e[arm].status.startsWith("error"))
        .map((arm) => `${e.id} (${arm}): ${e[arm].status}`)
    ).concat(
      Object.entries(s.train_errors).map(([id, st]) => `${id} (train): ${st}`),
    ),
    pass_through_reasons: [
      ...new Set(
        eps.flatMap((e) =>
          [e.a.last_pass_through, e.b.last_pass_through].filter((x) =>
            x !== null
          ) as string[]
        ),
      ),
    ],
    costliest: eps.map((e) => ({
      id: e.id,
      prompt: { a: e.a.prompt_tokens, b: e.b.prompt_tokens },
      tools: { a: e.a.tools_tokens, b: e.b.tools_tokens },
      shown: e.b.served_tokens,
      requests: { a: e.a.upstream_requests, b: e.b.upstream_requests },
      lookups: e.b.lookups,
      extra: e.b.extra_lookups,
    })).filter((x) => x.prompt.b > x.prompt.a).sort((x, y) =>
      (y.prompt.b - y.prompt.a) - (x.prompt.b - x.prompt.a)
    ).slice(0, 5),
  };
  const ta = sum((e) => e.a.tools_tokens);
  const tb = sum((e) => e.b.tools_tokens);
  const sa = sum((e) => e.a.served_tokens);
  const sb = sum((e) => e.b.served_tokens);
  const toolsPerReqA = ua ? ta / ua : 0;
  row.prompt_parts = {
    tools_per_request: {
      a: Math.round(toolsPerReqA),
      b: Math.round(ub ? tb / ub : 0),
    },
    tools_per_episode: { a: Math.round(ta / n), b: Math.round(tb / n) },
    lookups_shown_per_episode: Math.round(sb / n),
    rest_per_episode: {
      a: Math.round((pa - ta - sa) / n),
      b: Math.round((pb - tb - sb) / n),
    },
    ratio_with_a_tools: pa ? r4((pb - tb + ub * toolsPerReqA) / pa) : 0,
  };
  row.targets = {
    solved: row.solved.b_of_a >= TARGETS.solved_of_a,
    wrong: row.wrong.b <= TARGETS.wrong,
    requests: up.ratio <= TARGETS.requests_ratio,
    prompt: row.prompt_tokens_per_episode.ratio <= TARGETS.prompt_ratio,
    // One episode per run, no header sent: every training run named one
    // episode of its own, the capture holds exactly those, every judged
    // run named one.
    identity: s.train_identity.split === 0 &&
      s.train_identity.shared === 0 &&
      s.train_identity.named === s.train_runs &&
      s.train_captured === s.train_runs &&
      row.held_identity.split === 0,
  };
  row.met = Object.values(row.targets).every(Boolean);
  return row;
}

/** A row of the report. */
export type SeedRow = ReturnType<typeof seedRow>;

const range = (xs: number[]) => ({
  min: xs.length ? Math.min(...xs) : 0,
  max: xs.length ? Math.max(...xs) : 0,
});

/**
 * The report: per seed and variant (wire, whole or streamed), over them all, by variant.
 *
 * @param info About the run.
 * @param runs Every seed run.
 * @returns The JSON report.
 */
export function buildReport(info: RunInfo, runs: LoopSeedRun[]) {
  const rows = runs.map(seedRow);
  const sum = (f: (r: SeedRow) => number) => rows.reduce((a, r) => a + f(r), 0);
  const every = (k: keyof SeedRow["targets"]) =>
    rows.every((r) => r.targets[k]);
  const seeds = new Set(rows.map((r) => r.seed)).size;
  const variants = [...new Set(rows.map((r) => r.variant))];
  return {
    ...info,
    model:
      "scripted replay of the recorded agent behind the OpenAI Chat Completions wire (and an Anthropic Messages front over the same walker), on 127.0.0.1; tokens counted with gpt-tokenizer o200k_base",
    targets: TARGETS,
    over_seeds: {
      seeds,
      runs: rows.length,
      variants,
      tasks: sum((r) => r.tasks),
      solved: {
        a: sum((r) => r.solved.a),
        b: sum((r) => r.solved.b),
        b_of_a: range(rows.map((r) => r.solved.b_of_a)),
      },
      wrong_b: range(rows.map((r) => r.wrong.b)),
      upstream_requests_ratio: range(
        rows.map((r) => r.upstream_requests_per_episode.ratio),
      ),
      upstream_requests_per_episode: {
        a: range(rows.map((r) => r.upstream_requests_per_episode.a)),
        b: range(rows.map((r) => r.upstream_requests_per_episode.b)),
      },
      agent_requests_per_episode: {
        a: range(rows.map((r) => r.agent_requests_per_episode.a)),
        b: range(rows.map((r) => r.agent_requests_per_episode.b)),
      },
      prompt_ratio: range(rows.map((r) => r.prompt_tokens_per_episode.ratio)),
      prompt_tokens_per_episode: {
        a: range(rows.map((r) => r.prompt_tokens_per_episode.a)),
        b: range(rows.map((r) => r.prompt_tokens_per_episode.b)),
      },
      completion_tokens_per_episode: {
        a: range(rows.map((r) => r.completion_tokens_per_episode.a)),
        b: range(rows.map((r) => r.completion_tokens_per_episode.b)),
      },
      served_answers: range(rows.map((r) => r.served_answers)),
      refusals: range(rows.map((r) => r.refusals)),
      gave_up: range(rows.map((r) => r.gave_up)),
      passed_through: sum((r) => r.passed_through),
      record_misses: sum((r) => r.record_misses),
      identity: {
        train_runs: sum((r) => r.train.runs),
        train_episodes: sum((r) => r.train.captured),
        split: sum((r) => r.train.identity.split + r.held_identity.split),
        shared: sum((r) => r.train.identity.shared),
      },
      met: {
        solved: every("solved"),
        wrong: every("wrong"),
        requests: every("requests"),
        prompt: every("prompt"),
        identity: every("identity"),
        seeds: seeds >= TARGETS.seeds,
        all: rows.every((r) => r.met) && seeds >= TARGETS.seeds,
      },
    },
    by_variant: variants.map((v) => {
      const of = rows.filter((r) => r.variant === v);
      return {
        variant: v,
        seeds: of.length,
        b_of_a: range(of.map((r) => r.solved.b_of_a)),
        wrong_b: range(of.map((r) => r.wrong.b)),
        requests_ratio: range(
          of.map((r) => r.upstream_requests_per_episode.ratio),
        ),
        prompt_ratio: range(of.map((r) => r.prompt_tokens_per_episode.ratio)),
        met: of.every((r) => r.met),
      };
    }),
    per_seed: rows,
  };
}

/** The report {@linkcode buildReport} makes. */
export type LoopReport = ReturnType<typeof buildReport>;
