/**
 * Where the arguments of a τ file's calls come from.
 *
 * `deno run --allow-read bench/arg_sources.ts [--data FILE] [--seeds N]`
 * loads the file as the evaluation does (`loadTauData`), and for every
 * held-out call of seeds 1..N (default 8; `splitByTask`, each call counted
 * once per seed it is held out, as the evaluation's shares are) classifies
 * every argument value (every scalar leaf; a list of flight numbers is one
 * leaf per item) against the state before the call (`state_before`: the
 * user's messages so far and every earlier result), first match wins:
 *
 * - `result`: equal to a whole value in an earlier tool result, at a place
 *   that holds one value (not an item of a list of several);
 * - `result_item`: only found as an item of a list of several in an earlier
 *   result (a reservation id among the user's reservations: the agent
 *   picked one);
 * - `user`: written as is in a user message (whole token);
 * - `user_case`: in a user message with other capitals;
 * - `user_date`: an ISO date the user wrote in words or as M/D ("May 20th",
 *   "May 20–25" for the 25th);
 * - `user_relative`: the domain's today or tomorrow (from the policy's
 *   "The current time is …" when the file has one) and the user said so;
 * - `user_city`: an airport code whose city the user named (the city table
 *   is read from the file's own `list_all_airports` results);
 * - `user_word`: an enum-like word the user wrote with spaces or capitals
 *   ("basic economy" for `basic_economy`);
 * - `user_count`: a small whole number the user wrote as a word ("two");
 * - `computed`: a number that is a sum or multiple of earlier numbers, or a
 *   `calculate` expression whose every number has a source;
 * - `text`: free text the agent wrote (a `think` thought, a summary);
 * - `none`.
 *
 * It prints markdown: argument values by class (reads and state-changing
 * calls apart), calls by the hardest class among their arguments against
 * what the compiled package did with them today (a `replayAgent` verdict
 * from the package compiled on the seed's training split, as
 * `deno task eval` does), and the read calls each new source would make
 * fully sourced.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { loadTauData, type TauData } from "../eval/tau_data.ts";
import { splitByTask } from "../eval/split_eval.ts";
import { compileBehavior } from "../lib/compiler/compile_behavior.ts";
import { replayAgent } from "../lib/forms/agent/agent_replay.ts";
import {
  CLASSES,
  classifyStep,
  HAVE,
  type SourceClass,
  todayOf,
} from "../eval/arg_classes.ts";
import { formOf } from "../lib/forms/form_table.ts";

function citiesOf(data: TauData): Map<string, string> {
  const out = new Map<string, string>();
  for (const e of data.episodes) {
    for (const s of e.norm.steps) {
      if (s.logical_tool !== "list_all_airports" || !s.result) continue;
      const r = s.result as unknown;
      const pairs: [string, unknown][] = Array.isArray(r)
        ? r.map((x) => [String(x.iata ?? x.code), x.city])
        : Object.entries(r as Record<string, unknown>);
      for (const [code, city] of pairs) {
        if (typeof city === "string") out.set(code, city);
      }
    }
  }
  return out;
}

/** One classified call. */
export interface CallSources {
  /** Tool. */
  tool: string;
  /** Whether the tool only reads. */
  read: boolean;
  /** The class of each argument value. */
  classes: SourceClass[];
  /** What the package did with it (a `replayAgent` verdict). */
  verdict: string;
}

/**
 * Classify every held-out call of seeds 1..N.
 *
 * @param data The loaded file.
 * @param options Split seeds 1..N, the domain's today (see {@linkcode todayOf}).
 * @returns One record per held-out call per seed.
 */
export function heldOutSources(
  data: TauData,
  options: { seeds: number; today: string | null },
): CallSources[] {
  const { seeds, today } = options;
  const cities = citiesOf(data);
  const out: CallSources[] = [];
  for (let seed = 1; seed <= seeds; seed++) {
    const { train, held } = splitByTask(data.episodes, seed);
    const ir = compileBehavior(
      train.filter((e) => e.norm.success === true).map((e) => e.norm),
      { name: "tau", effects: data.effects },
    ).compiled.ir;
    const agentForm = formOf(ir).name === "agent";
    for (const e of held) {
      const verdicts = agentForm
        ? replayAgent(ir, { episode: e.norm, effects: data.effects }).verdicts
        : e.norm.steps.map(() => "tree");
      e.norm.steps.forEach((s, i) =>
        out.push({
          tool: s.logical_tool,
          read: data.effects[s.logical_tool] === "read",
          classes: classifyStep(s, { cities, today }),
          verdict: verdicts[i],
        })
      );
    }
  }
  return out;
}

const RANK: Record<SourceClass, number> = Object.fromEntries(
  CLASSES.map((c, i) => [c, i]),
) as Record<SourceClass, number>;

/** The hardest class among a call's arguments (`no_args` when it has none). */
export function hardest(classes: SourceClass[]): SourceClass | "no_args" {
  if (!classes.length) return "no_args";
  return classes.reduce((a, b) => RANK[a] >= RANK[b] ? a : b);
}

const pct = (n: number, d: number) => d ? `${(100 * n / d).toFixed(1)}%` : "-";

// Over 80 lines: the report's tables in order, each from the same classified calls.
/**
 * The markdown report.
 *
 * @param calls Classified calls.
 * @param title Heading.
 * @returns Markdown.
 */
export function renderSources(calls: CallSources[], title: string): string {
  const lines = [`### ${title}`, ""];
  const reads = calls.filter((c) => c.read);
  const writes = calls.filter((c) => !c.read);
  const argCount = (cs: CallSources[], k: SourceClass) =>
    cs.reduce((a, c) => a + c.classes.filter((x) => x === k).length, 0);
  const argTotal = (cs: CallSources[]) =>
    cs.reduce((a, c) => a + c.classes.length, 0);
  lines.push(
    `Held-out calls over the seeds: ${calls.length} (${reads.length} reads, ${writes.length} state-changing); argument values: ${
      argTotal(calls)
    }.`,
    "",
    "| class | values in reads | values in state-changing calls |",
    "| --- | --- | --- |",
    ...CLASSES.map((k) =>
      `| ${k} | ${argCount(reads, k)} (${
        pct(argCount(reads, k), argTotal(reads))
      }) | ${argCount(writes, k)} (${
        pct(argCount(writes, k), argTotal(writes))
      }) |`
    ),
    "",
  );
  const verdicts = [...new Set(calls.map((c) => c.verdict))].sort();
  const rows = ["no_args", ...CLASSES] as const;
  lines.push(
    `| hardest argument | reads | state-changing | ${
      verdicts.map((v) => `today: ${v}`).join(" | ")
    } |`,
    `| --- | --- | --- | ${verdicts.map(() => "---").join(" | ")} |`,
  );
  for (const r of rows) {
    const cs = calls.filter((c) => hardest(c.classes) === r);
    if (!cs.length) continue;
    lines.push(
      `| ${r} | ${cs.filter((c) => c.read).length} | ${
        cs.filter((c) => !c.read).length
      } | ${
        verdicts.map((v) => cs.filter((c) => c.verdict === v).length).join(
          " | ",
        )
      } |`,
    );
  }
  const sourced = (c: CallSources) =>
    !c.classes.some((x) => x === "none" || x === "text");
  const haveNow = (c: CallSources) => c.classes.every((x) => HAVE.has(x));
  const lookupMissed = reads.filter((c) => c.verdict !== "lookup");
  lines.push(
    "",
    `Every argument has a deterministic source (any class but text and none): ${
      calls.filter(sourced).length
    } of ${calls.length} calls (${
      pct(calls.filter(sourced).length, calls.length)
    }); reads: ${reads.filter(sourced).length} (${
      pct(reads.filter(sourced).length, calls.length)
    } of all calls, the ceiling of "no model call" while state-changing calls go through the choice leaf). With the sources we have (result, user): ${
      reads.filter(haveNow).length
    } reads (${
      pct(reads.filter(haveNow).length, calls.length)
    }). Made with no model call today: ${
      reads.filter((c) => c.verdict === "lookup").length
    } (${
      pct(reads.filter((c) => c.verdict === "lookup").length, calls.length)
    }).`,
    "",
    "| to build | reads not made today that it completes | share of all calls |",
    "| --- | --- | --- |",
  );
  for (const k of HAVE) {
    const n = lookupMissed.filter((c) =>
      haveNow(c) && hardest(c.classes) === k
    ).length;
    lines.push(
      `| nothing new: a source we have (hardest: ${k}), lookup not made | ${n} | ${
        pct(n, calls.length)
      } |`,
    );
  }
  const gains = CLASSES.filter((k) =>
    !HAVE.has(k) && k !== "none" && k !== "text"
  )
    .map((k) => {
      const n = lookupMissed.filter((c) =>
        c.classes.includes(k) && c.classes.every((x) =>
          HAVE.has(x) || x === k
        )
      ).length;
      return [k, n] as const;
    }).filter(([, n]) => n > 0).sort((a, b) => b[1] - a[1]);
  for (const [k, n] of gains) {
    lines.push(`| ${k} | ${n} | ${pct(n, calls.length)} |`);
  }
  const several =
    lookupMissed.filter((c) =>
      sourced(c) && new Set(c.classes.filter((x) => !HAVE.has(x))).size > 1
    ).length;
  lines.push(
    `| two or more of these together | ${several} | ${
      pct(several, calls.length)
    } |`,
  );
  return lines.join("\n");
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      data: { type: "string", multiple: true },
      seeds: { type: "string" },
    },
  });
  const files = values.data?.length ? values.data : [
    "../shared/datasets/tau-traces/tau2-bench/airline/toolorchestra_airline_1trial.json",
  ];
  const seeds = Number(values.seeds ?? 8);
  for (const f of files) {
    let text: string;
    try {
      text = await Deno.readTextFile(f);
    } catch (err) {
      console.error(
        `Cannot read the trajectory file ${f} (${
          (err as Error).message
        }); pass one with --data FILE`,
      );
      Deno.exit(1);
    }
    const calls = heldOutSources(loadTauData(text), {
      seeds,
      today: todayOf(text),
    });
    console.log(renderSources(calls, f.split("/").pop()!) + "\n");
  }
}
