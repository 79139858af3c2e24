/**
 * The tuning sweep: every agent-form parameter the compiler exposes,
 * judged by cross-validation inside each seed's training split only (the
 * same validation part `deno task eval --validate` uses; the held-out
 * split is never compiled against nor replayed).
 *
 * `deno run --allow-read bench/tune.ts --data FILE [--seeds N] [--json]`
 * sweeps every parameter in two stages and prints, for every grid point,
 * the validation share of calls made with no model call (min and mean over
 * seeds), the worst seed's wrong calls and the model turns per episode,
 * then the point the procedure picks:
 *
 * - stage 1: minYield × extra-lookup budget × fan-out cap, adjacency and
 *   speculative coverage at their defaults;
 * - stage 2: adjacency × speculative coverage at stage 1's pick.
 *
 * In each stage:
 *
 * 1. keep the points with 0 wrong calls on every seed;
 * 2. of those, the highest minimum share over seeds;
 * 3. ties: the lower mean package turns per episode, then the higher mean
 *    share, then the point nearest the current default.
 *
 * The rule is the same for every domain and was fixed before any sweep
 * was run (see docs/evaluation.md, "Tuning procedure").
 *
 * @module
 */
import { parseArgs } from "node:util";
import { loadTauData, type TauData } from "../eval/tau_data.ts";
import { splitFor } from "../eval/split_eval.ts";
import { buildAgentForm } from "../lib/forms/agent/build_agent_form.ts";
import { compileBehavior } from "../lib/compiler/compile_behavior.ts";
import { replayAgent } from "../lib/forms/agent/agent_replay.ts";
import type { NormEpisode } from "../lib/lineage/records.ts";
import { formOf } from "../lib/forms/form_table.ts";

/** One point of the grid. */
export interface GridPoint {
  /** Least share of a lookup node's calls the agent must have made. */
  minYield: number;
  /** Extra lookups per training episode the kept lookups may cost. */
  budget: number;
  /** Fan-out cap per lookup node. */
  fanout: number;
  /** Adjacency share of paired user words. */
  adjacentShare: number;
  /** Coverage a contested binding needs to drive a lookup. */
  speculativeCoverage: number;
}

/** What one grid point scored on the validation parts of every seed. */
export interface GridScore extends GridPoint {
  /** Share of validation calls with no model call, per seed. */
  shares: number[];
  /** Least share over seeds. */
  min: number;
  /** Mean share over seeds. */
  mean: number;
  /** Wrong state-changing calls, worst seed. */
  wrong: number;
  /** Agent turns per validation episode, mean over seeds. */
  agent_turns: number;
  /** Model turns per validation episode with the package, mean over seeds. */
  package_turns: number;
}

/** The current defaults of `lib/forms/agent/build_agent_form.ts` and `bindings.ts`. */
export const CURRENT: GridPoint = {
  minYield: 0.25,
  budget: 3,
  fanout: 5,
  adjacentShare: 0.8,
  speculativeCoverage: 0.9,
};

/** Stage 1: minYield × budget × fan-out cap, the rest at their defaults. */
export const STAGE1_GRID: GridPoint[] = [0.1, 0.25, 0.4, 0.6].flatMap((
  minYield,
) =>
  [1, 2, 3, 5, 8].flatMap((budget) =>
    [5, 10, 20].map((fanout) => ({ ...CURRENT, minYield, budget, fanout }))
  )
);

/**
 * Stage 2: adjacency × speculative coverage around a stage-1 pick.
 *
 * @param at The stage-1 pick.
 * @returns The grid.
 */
export function stage2Grid(at: GridPoint): GridPoint[] {
  const shares = [0.6, 0.7, 0.8, 0.9, 1.0];
  return shares.flatMap((adjacentShare) =>
    shares.map((speculativeCoverage) => ({
      minYield: at.minYield,
      budget: at.budget,
      fanout: at.fanout,
      adjacentShare,
      speculativeCoverage,
    }))
  );
}

interface SeedSplit {
  train: NormEpisode[];
  validation: TauData["episodes"];
  agentForm: boolean;
}

function splitsOf(data: TauData, seeds: number): SeedSplit[] {
  const out: SeedSplit[] = [];
  for (let seed = 1; seed <= seeds; seed++) {
    const inner = splitFor(data.episodes, seed, { validate: true });
    const train = inner.train.filter((e) => e.norm.success === true)
      .map((e) => e.norm)
      .sort((a, b) => a.episode_id < b.episode_id ? -1 : 1);
    const ir = compileBehavior(train, { name: "tau", effects: data.effects })
      .compiled.ir;
    out.push({
      train,
      validation: inner.held,
      agentForm: formOf(ir).name === "agent",
    });
  }
  return out;
}

function scorePoint(
  data: TauData,
  splits: SeedSplit[],
  p: GridPoint,
): GridScore {
  const shares: number[] = [];
  let wrong = 0, agentTurns = 0, packageTurns = 0;
  for (const s of splits) {
    if (!s.agentForm) {
      throw new RangeError(
        "A seed compiled to the tree form: the agent-form parameters do not apply; sweep only files whose packages are agent forms",
      );
    }
    const ir = buildAgentForm(s.train, {
      name: "tau",
      effects: data.effects,
      minYield: p.minYield,
      extraLookupBudget: p.budget,
      fanout: p.fanout,
      adjacentShare: p.adjacentShare,
      speculativeCoverage: p.speculativeCoverage,
    }).compiled.ir;
    let calls = 0, det = 0, w = 0, at = 0, pt = 0;
    for (const e of s.validation) {
      const r = replayAgent(ir, { episode: e.norm, effects: data.effects });
      calls += e.norm.steps.length;
      at += e.turns;
      w += r.wrong;
      const needsModel = new Set<number>(e.textTurns);
      r.verdicts.forEach((v, i) => {
        if (v === "lookup") det++;
        else needsModel.add(e.turnOf[i]);
      });
      pt += needsModel.size;
    }
    shares.push(calls ? det / calls : 0);
    wrong = Math.max(wrong, w);
    agentTurns += s.validation.length ? at / s.validation.length : 0;
    packageTurns += s.validation.length ? pt / s.validation.length : 0;
  }
  return {
    ...p,
    shares,
    min: Math.min(...shares),
    mean: shares.reduce((a, b) => a + b, 0) / shares.length,
    wrong,
    agent_turns: agentTurns / splits.length,
    package_turns: packageTurns / splits.length,
  };
}

function distance(p: GridPoint): number {
  return Math.abs(p.minYield - CURRENT.minYield) +
    Math.abs(p.budget - CURRENT.budget) / 10 +
    Math.abs(p.fanout - CURRENT.fanout) / 100 +
    Math.abs(p.adjacentShare - CURRENT.adjacentShare) +
    Math.abs(p.speculativeCoverage - CURRENT.speculativeCoverage);
}

/**
 * The point the procedure picks (see the module comment).
 *
 * @param scores Every grid point's score.
 * @returns The chosen score, or null when every point had a wrong call.
 */
export function pickPoint(scores: GridScore[]): GridScore | null {
  const ok = scores.filter((s) => s.wrong === 0);
  ok.sort((a, b) =>
    b.min - a.min || a.package_turns - b.package_turns ||
    b.mean - a.mean || distance(a) - distance(b)
  );
  return ok[0] ?? null;
}

/**
 * Sweep the grid over one file.
 *
 * @param text The trajectory file's text.
 * @param options Seeds (1..N, default 8); `grid`: one stage over these
 *   points instead of the two stages.
 * @returns Every point's score (both stages) and the pick.
 */
export function tune(
  text: string,
  options: { seeds?: number; grid?: GridPoint[] } = {},
): { scores: GridScore[]; pick: GridScore | null } {
  const data = loadTauData(text);
  const splits = splitsOf(data, options.seeds ?? 8);
  const run = (grid: GridPoint[]) =>
    grid.map((p) => scorePoint(data, splits, p));
  if (options.grid) {
    const scores = run(options.grid);
    return { scores, pick: pickPoint(scores) };
  }
  const first = run(STAGE1_GRID);
  const at = pickPoint(first);
  if (!at) return { scores: first, pick: null };
  const second = run(stage2Grid(at));
  return { scores: [...first, ...second], pick: pickPoint(second) };
}

const same = (a: GridPoint, b: GridPoint) =>
  a.minYield === b.minYield && a.budget === b.budget &&
  a.fanout === b.fanout && a.adjacentShare === b.adjacentShare &&
  a.speculativeCoverage === b.speculativeCoverage;

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

function render(name: string, r: ReturnType<typeof tune>): string {
  const mark = (s: GridScore) =>
    (s === r.pick ? " **picked**" : "") +
    (same(s, CURRENT) ? " (current)" : "");
  return [
    `### ${name} (validation parts only)`,
    "",
    "| minYield | budget | fan-out | adjacency | coverage | no model call, min | mean | wrong (worst seed) | model turns / episode (agent → package) |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ...r.scores.map((s) =>
      `| ${s.minYield} | ${s.budget} | ${s.fanout} | ${s.adjacentShare} | ${s.speculativeCoverage}${
        mark(s)
      } | ${pct(s.min)} | ${pct(s.mean)} | ${s.wrong} | ${
        s.agent_turns.toFixed(2)
      } → ${s.package_turns.toFixed(2)} |`
    ),
    "",
    r.pick
      ? `Picked: minYield ${r.pick.minYield}, budget ${r.pick.budget}, fan-out ${r.pick.fanout}, adjacency ${r.pick.adjacentShare}, coverage ${r.pick.speculativeCoverage}.`
      : "Picked: none (every point had a wrong call).",
  ].join("\n");
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      data: { type: "string", multiple: true },
      seeds: { type: "string" },
      json: { type: "boolean" },
    },
  });
  const files = values.data ?? [];
  if (!files.length) {
    console.error(
      "Pass a trajectory file: deno run --allow-read bench/tune.ts --data FILE [--data FILE …] [--seeds N] [--json]",
    );
    Deno.exit(2);
  }
  const seeds = Number(values.seeds ?? 8);
  const out: Record<string, ReturnType<typeof tune>> = {};
  for (const f of files) {
    const r = tune(await Deno.readTextFile(f), { seeds });
    out[f] = r;
    if (!values.json) console.log(render(f.split("/").pop()!, r) + "\n");
  }
  if (values.json) console.log(JSON.stringify(out));
}
