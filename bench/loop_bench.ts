/**
 * The closed-loop benchmark: `deno task bench loop [--data FILE] [--seeds N]
 * [--json] [--out DIR]`. For each split seed, one package is compiled from
 * the training split of a τ² retail file; every held-out task is then run
 * as a live conversation twice, (a) the agent alone and (b) the agent with
 * the package, through the OpenAI binding over HTTP against a local
 * scripted model server that replays the recorded agent, with the recorded
 * user and the retail environment's real tools (see eval/closed_loop.ts).
 * Also checks the environment port: replaying each successful matched
 * episode's calls must reproduce its recorded results. The figures are
 * summed in `_loop_report.ts` and rendered in `_loop_md.ts`.
 *
 * @module
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { loadTauData } from "../eval/tau_data.ts";
import { closedLoopSeed, type LoopSeed } from "../eval/closed_loop.ts";
import { startScriptedModelServer } from "../eval/scripted_model_server.ts";
import { openModel } from "../lib/models/open_model.ts";
import { changesState } from "../lib/package/tool_effects.ts";
import { replayCheck, RETAIL_TOOL_SCHEMAS } from "../eval/envs/tau2/mod.ts";
import {
  envReplaySummary,
  heldoutSummary,
  seedSummary,
} from "./_loop_report.ts";
import { renderLoop } from "./_loop_md.ts";

const HERE = dirname(fileURLToPath(import.meta.url));
const DEFAULT_DATA = join(
  HERE,
  "../../shared/datasets/tau-traces/tau2-bench/retail/toolorchestra_retail_1trial.json",
);

// Over 80 lines: arguments, data, the two arms and the report, in the order they run.
/**
 * Run the closed loop.
 *
 * @param args Command-line words after `loop`.
 * @returns The JSON report.
 */
export async function loopBench(
  args: string[],
): Promise<Record<string, unknown>> {
  const { values } = parseArgs({
    args,
    options: {
      data: { type: "string" },
      db: { type: "string" },
      match: { type: "string" },
      seeds: { type: "string" },
      json: { type: "boolean", default: false },
      out: { type: "string" },
      validate: { type: "boolean", default: false },
    },
  });
  const dataPath = values.data ?? DEFAULT_DATA;
  const domain = join(dirname(dataPath), "../domains/retail");
  const dbPath = values.db ?? join(domain, "db.json");
  const text = await Deno.readTextFile(dataPath);
  const matchPath = values.match ??
    dataPath.replace(/(_1trial)?\.json$/, "_task_match.json");
  const matchText = await Deno.readTextFile(matchPath).catch(() => null);
  const db = JSON.parse(await Deno.readTextFile(dbPath));
  const instructions = await Deno.readTextFile(
    join(dirname(dbPath), "policy.md"),
  )
    .catch(() => "You are a retail customer service agent.");
  const data = loadTauData(text, { matchText });
  const raw = JSON.parse(text);
  const simulations = raw.simulations as unknown[];
  const writes = new Set(
    Object.keys(data.effects).filter((t) => changesState(data.effects, t)),
  );
  const t0 = performance.now();
  const replay = replayCheck(raw, {
    match: matchText ? JSON.parse(matchText) : null,
    db,
  });
  const replayMs = performance.now() - t0;
  await using server = await startScriptedModelServer({ writes });
  const n = Number(values.seeds ?? 8);
  const seeds: LoopSeed[] = [];
  for (let s = 1; s <= n; s++) {
    seeds.push(
      await closedLoopSeed(data, {
        seed: s,
        setup: {
          db,
          schemas: RETAIL_TOOL_SCHEMAS.map((
            { name, description, parameters },
          ) => ({
            name,
            description,
            parameters,
          })),
          instructions,
          simulations,
          server,
          openChat: (url) =>
            openModel("openai/scripted-replay", { url, env: {} }),
        },
        validate: values.validate,
      }),
    );
    if (!values.json) console.error(`loop: seed ${s}/${n} done`);
  }
  const rows = seeds.map(seedSummary);
  const report = {
    data: dataPath.split("/").slice(-3).join("/"),
    seeds: n,
    mode: values.validate
      ? "validation part of the training split (held-out set aside)"
      : "held-out",
    model:
      "scripted replay of the recorded agent (OpenAI Chat Completions over HTTP on 127.0.0.1; tokens counted with gpt-tokenizer o200k_base)",
    heldout: heldoutSummary(rows, n),
    env_replay: envReplaySummary(replay, replayMs),
    per_seed: rows,
  };
  const md = renderLoop(report, rows);
  if (values.out) {
    await Deno.mkdir(values.out, { recursive: true });
    await Deno.writeTextFile(join(values.out, "loop.md"), md + "\n");
    await Deno.writeTextFile(
      join(values.out, "loop.json"),
      JSON.stringify(report, null, 2) + "\n",
    );
  }
  console.log(values.json ? JSON.stringify(report, null, 2) : md);
  return report;
}

if (import.meta.main) await loopBench(Deno.args);
