/**
 * The τ-bench evaluation: how the compiler does on agent runs nobody here
 * wrote. `deno task eval [--data FILE] [--seeds N] [--json] [--match FILE]
 * [--out DIR]` reads a τ²-bench or τ-bench (v1) trajectory file (default:
 * the τ² retail slice vendored in `fixtures/`; the figures in
 * `bench/out/tau_eval.md` are from the full file in
 * `../shared/datasets/tau-traces/`, {@linkcode FULL_DATA}), evaluates every
 * split seed 1..N (default 8) with one package per domain compiled from
 * the training split, shows each seed on stderr, and writes `tau_eval.md`
 * and `tau_eval.json` to `--out DIR` (taken from the folder the task is run
 * from), else to a new scratch folder under the checkout's `.tmp/` whose
 * name it prints (the tracked `bench/out/` is written only when named:
 * `--data ../shared/… --out bench/out`). Deterministic: same data, same
 * numbers. See `eval/split_eval.ts` for how each call is judged.
 *
 * @module
 */
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { requireOutputAccess } from "../lib/cli/output_access.ts";
import { loadTauData } from "../eval/tau_data.ts";
import { evaluateSeed, type SeedResult } from "../eval/split_eval.ts";
import { emptyLineageScore, scoreLineage } from "../eval/lineage_score.ts";
import { DEFAULT_FANOUT } from "../lib/forms/agent/agent_engine.ts";

const HERE = dirname(fileURLToPath(import.meta.url));

/** The default data file: the τ² retail slice in the checkout (`fixtures/TAU2_SOURCE.md`). */
export const DEFAULT_DATA = join(HERE, "../fixtures/tau2_retail_slice.json");

/** {@linkcode FULL_DATA} relative to the checkout, as help shows it. */
export const FULL_DATA_IN_CHECKOUT =
  "../shared/datasets/tau-traces/tau2-bench/retail/toolorchestra_retail_1trial.json";

/** The full τ² retail file the published figures come from (beside the checkout, for the team and CI). */
export const FULL_DATA = join(HERE, "..", FULL_DATA_IN_CHECKOUT);

/** Options of {@linkcode tauEval}. */
export interface TauEvalOptions {
  /** Trajectory file. */
  data?: string;
  /** Task-match file (τ²; default: `<name>_task_match.json` beside the data when present). */
  match?: string | null;
  /** Seeds 1..N. @default 8 */
  seeds?: number;
  /** Output folder (null or absent: write nothing). */
  outDir?: string | null;
  /** Print nothing. */
  quiet?: boolean;
  /** Called after each seed with a line for stderr (`seed 2/8: …`). */
  onProgress?: (line: string) => void;
  /**
   * Tuning mode: judge on a validation part of each seed's training split;
   * the held-out split is not looked at.
   */
  validate?: boolean;
}

function range(xs: number[]): { min: number; max: number } {
  return { min: Math.min(...xs), max: Math.max(...xs) };
}

const r4 = (x: number) => Math.round(x * 10000) / 10000;

function pct(x: number): string {
  return `${(100 * x).toFixed(1)}%`;
}

async function readIfExists(path: string | null): Promise<string | null> {
  if (!path) return null;
  try {
    return await Deno.readTextFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    throw err;
  }
}

// Over 80 lines: load, every seed, the summary record and the output, in the order they run.
/**
 * Run the evaluation.
 *
 * @param options Data, match file, seeds, output folder.
 * @returns The JSON report.
 */
export async function tauEval(
  options: TauEvalOptions = {},
): Promise<Record<string, unknown>> {
  const dataPath = options.data ?? DEFAULT_DATA;
  let text: string;
  try {
    text = await Deno.readTextFile(dataPath);
  } catch (err) {
    throw new Error(
      `Cannot read the trajectory file ${dataPath} (${
        (err as Error).message
      }); pass one with --data FILE`,
    );
  }
  const matchPath = options.match === undefined
    ? dataPath.replace(/(_1trial)?\.json$/, "_task_match.json")
    : options.match;
  const matchText = matchPath === dataPath
    ? null
    : await readIfExists(matchPath);
  const data = loadTauData(text, { matchText });
  const n = options.seeds ?? 8;
  const seeds: SeedResult[] = [];
  options.onProgress?.(
    `eval: ${data.episodes.length} episodes from ${dataPath}, ${n} split seeds`,
  );
  for (let s = 1; s <= n; s++) {
    const started = performance.now();
    const r = evaluateSeed(data, s, { validate: options.validate });
    seeds.push(r);
    options.onProgress?.(
      `eval: seed ${s}/${n}: ${r.held_out} held-out episodes, ${r.calls} calls, ${
        pct(r.calls ? r.deterministic / r.calls : 0)
      } with no model call, ${r.wrong} wrong (${
        ((performance.now() - started) / 1000).toFixed(1)
      } s)`,
    );
  }
  const lineage = emptyLineageScore();
  for (const e of data.episodes) {
    scoreLineage(lineage, { episode: e.norm, actions: e.truth });
  }
  const share = (r: SeedResult) => r.calls ? r.deterministic / r.calls : 0;
  const perEp = (r: SeedResult, x: number) => r.held_out ? x / r.held_out : 0;
  const report = {
    data: dataPath.split("/").slice(-3).join("/"),
    format: data.format,
    episodes: data.episodes.length,
    seeds: n,
    mode: options.validate
      ? "validation inside each training split (held-out split untouched)"
      : "held-out",
    split:
      "by task: a quarter of the tasks held out (seeded shuffle); one package compiled from the training split's successful episodes",
    fanout_cap: DEFAULT_FANOUT,
    heldout: {
      calls: seeds.reduce((a, r) => a + r.calls, 0),
      deterministic: range(seeds.map((r) => r4(share(r)))),
      wrong: { max: Math.max(...seeds.map((r) => r.wrong)) },
      extra_lookups_per_episode: {
        max: r4(Math.max(...seeds.map((r) => perEp(r, r.extra_lookups)))),
      },
      user_calls: seeds.reduce((a, r) => a + r.user_calls, 0),
      model_turns_per_episode: {
        agent: r4(
          seeds.reduce((a, r) => a + perEp(r, r.agent_turns), 0) / n,
        ),
        package: r4(Math.max(...seeds.map((r) => perEp(r, r.package_turns)))),
      },
      stopped_episodes: range(seeds.map((r) => r.stops)),
      choice_candidates_per_argument: {
        mean: r4(
          seeds.reduce((a, r) => a + r.choice_candidates.total, 0) /
            Math.max(
              1,
              seeds.reduce((a, r) => a + r.choice_candidates.args, 0),
            ),
        ),
        max: Math.max(...seeds.map((r) => r.choice_candidates.max)),
      },
    },
    lineage: {
      precision: lineage.attributed
        ? r4(lineage.correct / lineage.attributed)
        : null,
      recall: lineage.ground_truth_values
        ? r4(lineage.attributed / lineage.ground_truth_values)
        : null,
      ground_truth_values: lineage.ground_truth_values,
      attributed: lineage.attributed,
      correct: lineage.correct,
      episodes_with_ground_truth: data.episodes.filter((e) => e.truth.length)
        .length,
      matched_through_task_match_file: data.matched,
      misses: lineage.misses.slice(0, 20),
    },
    per_seed: seeds,
    caveats: [
      "Choice leaves (state-changing calls) are scored as if the model answered as the agent did; the runtime only checks that every argument is one of its candidates (choice_candidates_per_argument says how many the model had to pick from; arguments checked against the user's text are not counted).",
      "A lookup the episode never made has no known result here (the episode is the only oracle): it counts as an extra lookup and feeds nothing.",
      "Model turns per episode: package = the worst seed; agent = the mean over seeds.",
    ],
  };
  const md = renderMarkdown(report, seeds);
  if (options.outDir) {
    const out = options.outDir;
    await Deno.mkdir(out, { recursive: true });
    await Deno.writeTextFile(
      join(out, "tau_eval.json"),
      JSON.stringify(report, null, 2) + "\n",
    );
    await Deno.writeTextFile(join(out, "tau_eval.md"), md + "\n");
  }
  if (!options.quiet) console.log(md);
  return report;
}

/** Counts summed over seeds, as list lines, largest first. */
function countLines(counts: Record<string, number>[]): string[] {
  const sum: Record<string, number> = {};
  for (const c of counts) {
    for (const [k, v] of Object.entries(c)) sum[k] = (sum[k] ?? 0) + v;
  }
  return Object.entries(sum).sort((a, b) =>
    b[1] - a[1] || (a[0] < b[0] ? -1 : 1)
  ).map(([k, v]) => `- ${k} (${v})`);
}

// Over 80 lines: the report's sections in order, one table each.
function renderMarkdown(
  report: {
    data: string;
    episodes: number;
    seeds: number;
    mode: string;
    split: string;
    fanout_cap: number;
    heldout: Record<string, unknown>;
    lineage: Record<string, unknown>;
    caveats: string[];
  },
  seeds: SeedResult[],
): string {
  const h = report.heldout as {
    deterministic: { min: number; max: number };
    wrong: { max: number };
    extra_lookups_per_episode: { max: number };
    model_turns_per_episode: { agent: number; package: number };
  };
  const l = report.lineage as {
    precision: number | null;
    recall: number | null;
    ground_truth_values: number;
    attributed: number;
  };
  return [
    `# τ-bench: compile quality on real trajectories (${report.mode})`,
    "",
    `${report.data}, ${report.episodes} episodes, ${report.seeds} split seeds. Split ${report.split}. Fan-out cap ${report.fanout_cap}.`,
    "",
    "| seed | train | held-out | form | calls | no model call | choices | model reads | stopped episodes | wrong | extra lookups / episode | model turns / episode (agent → package) |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ...seeds.map((r) =>
      `| ${r.seed} | ${r.train} | ${r.held_out} | ${r.form} | ${r.calls} | ${
        pct(r.calls ? r.deterministic / r.calls : 0)
      } | ${r.choices} | ${r.model_reads} | ${r.stops} | ${r.wrong} | ${
        (r.extra_lookups / r.held_out).toFixed(2)
      } | ${(r.agent_turns / r.held_out).toFixed(1)} → ${
        (r.package_turns / r.held_out).toFixed(1)
      } |`
    ),
    "",
    "## Over all seeds",
    "",
    "| measure | value | target |",
    "| --- | --- | --- |",
    `| calls made with no model call | ${pct(h.deterministic.min)} – ${
      pct(h.deterministic.max)
    } | ≥ 55% every seed |`,
    `| wrong state-changing calls | ${h.wrong.max} (worst seed) | 0 |`,
    `| the user's own tool calls (dual control; never the package's) | ${
      (report.heldout as { user_calls: number }).user_calls
    } over all seeds | - |`,
    `| extra lookups per episode | ${
      h.extra_lookups_per_episode.max.toFixed(2)
    } (worst seed) | ≤ 5 |`,
    `| model turns per episode | agent ${
      h.model_turns_per_episode.agent.toFixed(1)
    } → package ${
      h.model_turns_per_episode.package.toFixed(1)
    } (worst seed) | ≤ 8.0 |`,
    `| candidates per argument of a choice | mean ${
      (report.heldout as { choice_candidates_per_argument: { mean: number } })
        .choice_candidates_per_argument.mean.toFixed(1)
    }, max ${
      (report.heldout as { choice_candidates_per_argument: { max: number } })
        .choice_candidates_per_argument.max
    } | - |`,
    `| lineage precision against ground truth | ${
      l.precision?.toFixed(3) ?? "-"
    } | ≥ 0.99 |`,
    `| lineage recall against ground truth | ${
      l.recall?.toFixed(3) ?? "-"
    } (${l.attributed}/${l.ground_truth_values}) | ≥ 0.95 |`,
    "",
    "## Reads the model still asks for (all seeds)",
    "",
    ...countLines(seeds.map((r) => r.model_reads_by_tool)),
    "",
    "## Why held-out episodes stopped",
    "",
    ...countLines(seeds.map((r) => r.stop_reasons)),
    "",
    "## Caveats",
    "",
    ...report.caveats.map((c) => `- ${c}`),
  ].join("\n");
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      data: { type: "string" },
      match: { type: "string" },
      seeds: { type: "string" },
      out: { type: "string" },
      json: { type: "boolean" },
      validate: { type: "boolean" },
      help: { type: "boolean" },
    },
  });
  if (values.help) {
    console.log(
      `deno task eval [--data FILE] [--match FILE] [--seeds N] [--out DIR] [--json] [--validate]
  --data   a τ²-bench or τ-bench v1 trajectory file (default: fixtures/tau2_retail_slice.json;
           the published figures, run from the checkout: --data ${FULL_DATA_IN_CHECKOUT})
  --out    where tau_eval.md and tau_eval.json go (default: a new scratch folder under .tmp/, printed)
  progress goes to stderr, one line per seed`,
    );
    Deno.exit(0);
  }
  const seeds = values.seeds === undefined ? 8 : Number(values.seeds);
  if (!Number.isInteger(seeds) || seeds < 1) {
    console.error("--seeds takes a whole number of at least 1");
    Deno.exit(2);
  }
  try {
    // Paths the user typed are their folder's (deno task runs here).
    const initCwd =
      Deno.permissions.querySync({ name: "env", variable: "INIT_CWD" })
          .state === "granted"
        ? Deno.env.get("INIT_CWD")
        : undefined;
    const here = (p: string | undefined) =>
      p === undefined ? undefined : resolve(initCwd ?? ".", p);
    const outDir = values.validate && !values.out
      ? null
      : here(values.out) ?? await scratchFolder();
    // Before minutes of work: an output the task may not write says so now.
    if (outDir) {
      requireOutputAccess({
        path: outDir,
        task: "eval",
        granted: initCwd,
        rerun: `deno run --allow-read --allow-write={WRITE} ${
          fileURLToPath(import.meta.url)
        }`,
      });
    }
    const report = await tauEval({
      data: here(values.data),
      match: here(values.match),
      seeds,
      outDir,
      quiet: values.json,
      validate: values.validate,
      onProgress: (line) => console.error(line),
    });
    if (values.json) console.log(JSON.stringify(report));
    if (outDir) {
      console.error(`eval: wrote tau_eval.md and tau_eval.json to ${outDir}`);
    }
  } catch (err) {
    console.error((err as Error).message);
    Deno.exit(1);
  }
}

/** A new folder under the checkout's `.tmp/` (git-ignored) for one run's results. */
async function scratchFolder(): Promise<string> {
  const base = join(HERE, "../.tmp");
  await Deno.mkdir(base, { recursive: true });
  return await Deno.makeTempDir({ dir: base, prefix: "eval_" });
}
