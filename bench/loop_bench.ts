/**
 * The closed-loop benchmark: `deno task bench loop [--data FILE] [--seeds N]
 * [--json] [--out DIR]`. For each split seed, one package is compiled from
 * the training split of a τ² retail file; every held-out task is then run
 * as a live conversation twice, (a) the agent alone and (b) the agent with
 * the package, through the OpenAI binding over HTTP against a local
 * scripted model server that replays the recorded agent, with the recorded
 * user and the retail environment's real tools (see eval/closed_loop.ts).
 * Also checks the environment port: replaying each successful matched
 * episode's calls must reproduce its recorded results.
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
import { renderTable as table } from "../lib/cli/table.ts";

const HERE = dirname(fileURLToPath(import.meta.url));
const DEFAULT_DATA = join(
  HERE,
  "../../shared/datasets/tau-traces/tau2-bench/retail/toolorchestra_retail_1trial.json",
);

const r2 = (x: number) => Math.round(x * 100) / 100;
const r4 = (x: number) => Math.round(x * 10000) / 10000;

function perSeed(s: LoopSeed) {
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
  const rows = seeds.map(perSeed);
  const sum = (f: (r: ReturnType<typeof perSeed>) => number) =>
    rows.reduce((a, r) => a + f(r), 0);
  const ratio = (a: number, b: number) => (a ? r4(b / a) : 0);
  const report = {
    data: dataPath.split("/").slice(-3).join("/"),
    seeds: n,
    mode: values.validate
      ? "validation part of the training split (held-out set aside)"
      : "held-out",
    model:
      "scripted replay of the recorded agent (OpenAI Chat Completions over HTTP on 127.0.0.1; tokens counted with gpt-tokenizer o200k_base)",
    heldout: {
      tasks: sum((r) => r.tasks),
      solved: {
        agent: sum((r) => r.solved.agent),
        package: sum((r) => r.solved.package),
        package_of_agent: {
          min: Math.min(...rows.map((r) => r.solved.package_of_agent)),
          max: Math.max(...rows.map((r) => r.solved.package_of_agent)),
        },
      },
      wrong: { max: Math.max(...rows.map((r) => r.wrong.package)) },
      model_calls_per_episode: {
        agent: r2(sum((r) => r.model_calls_per_episode.agent) / n),
        package: r2(sum((r) => r.model_calls_per_episode.package) / n),
        ratio: {
          min: Math.min(
            ...rows.map((r) =>
              ratio(
                r.model_calls_per_episode.agent,
                r.model_calls_per_episode.package,
              )
            ),
          ),
          max: Math.max(
            ...rows.map((r) =>
              ratio(
                r.model_calls_per_episode.agent,
                r.model_calls_per_episode.package,
              )
            ),
          ),
        },
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
        prompt_ratio: {
          min: Math.min(
            ...rows.map((r) =>
              ratio(
                r.tokens_per_episode.agent.prompt,
                r.tokens_per_episode.package.prompt,
              )
            ),
          ),
          max: Math.max(
            ...rows.map((r) =>
              ratio(
                r.tokens_per_episode.agent.prompt,
                r.tokens_per_episode.package.prompt,
              )
            ),
          ),
        },
      },
      extra_lookups_per_episode: {
        max: Math.max(...rows.map((r) => r.extra_lookups_per_episode)),
      },
      refused_choices: sum((r) => r.refused_choices),
    },
    env_replay: {
      episodes: replay.episodes,
      calls: replay.calls,
      reproduced: replay.reproduced_calls,
      rate: replay.calls ? r4(replay.reproduced_calls / replay.calls) : 0,
      solved: replay.solved,
      ms: Math.round(replayMs),
      mismatches: replay.mismatches.slice(0, 10),
    },
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

// Over 80 lines: the report's sections in order, one table each.
function renderLoop(
  report: {
    data: string;
    seeds: number;
    mode: string;
    model: string;
    heldout: Record<string, unknown>;
    env_replay: Record<string, unknown>;
  },
  rows: ReturnType<typeof perSeed>[],
): string {
  const h = report.heldout as {
    tasks: number;
    solved: {
      agent: number;
      package: number;
      package_of_agent: { min: number; max: number };
    };
    wrong: { max: number };
    model_calls_per_episode: {
      agent: number;
      package: number;
      ratio: { min: number; max: number };
    };
    tokens_per_episode: {
      agent: { prompt: number; completion: number };
      package: { prompt: number; completion: number };
      prompt_ratio: { min: number; max: number };
    };
    extra_lookups_per_episode: { max: number };
    refused_choices: number;
  };
  const e = report.env_replay as {
    episodes: number;
    calls: number;
    reproduced: number;
    rate: number;
    solved: number;
  };
  return [
    "# Closed loop: the compiled package in live conversations (τ² retail)",
    "",
    `${report.data}, ${report.seeds} split seeds, judged on the ${report.mode} tasks. Model: ${report.model}. Tools: the TypeScript retail environment over the τ² database. User: the recorded user messages in order. Solved: the database after the run equals the database after the task's ground-truth actions.`,
    "",
    table(
      [
        "seed",
        "tasks",
        "solved a → b",
        "b of a's",
        "wrong (b)",
        "model requests / ep (a → b)",
        "prompt tokens / ep (a → b)",
        "completion tokens / ep (a → b)",
        "lookups / ep",
        "extra / ep",
        "refused",
        "wall s (a, b)",
      ],
      rows.map((r) => [
        String(r.seed),
        String(r.tasks),
        `${r.solved.agent} → ${r.solved.package}`,
        `${(100 * r.solved.package_of_agent).toFixed(1)}%`,
        String(r.wrong.package),
        `${r.model_calls_per_episode.agent} → ${r.model_calls_per_episode.package}`,
        `${r.tokens_per_episode.agent.prompt} → ${r.tokens_per_episode.package.prompt}`,
        `${r.tokens_per_episode.agent.completion} → ${r.tokens_per_episode.package.completion}`,
        String(r.lookups_per_episode),
        String(r.extra_lookups_per_episode),
        String(r.refused_choices),
        `${(r.wall_ms.agent / 1000).toFixed(1)}, ${
          (r.wall_ms.package / 1000).toFixed(1)
        }`,
      ]),
    ),
    "",
    "## Over all seeds",
    "",
    table(["measure", "value", "target"], [
      [
        "tasks the agent alone solves that the package solves too",
        `${(100 * h.solved.package_of_agent.min).toFixed(1)}% – ${
          (100 * h.solved.package_of_agent.max).toFixed(1)
        }%`,
        "≥ 95% every seed",
      ],
      [
        "wrong state-changing calls (package)",
        `${h.wrong.max} (worst seed)`,
        "0",
      ],
      [
        "model requests per episode, package / agent",
        `${h.model_calls_per_episode.ratio.min} – ${h.model_calls_per_episode.ratio.max} (${h.model_calls_per_episode.agent} → ${h.model_calls_per_episode.package})`,
        "≤ 0.75 every seed",
      ],
      [
        "prompt tokens per episode, package / agent",
        `${h.tokens_per_episode.prompt_ratio.min} – ${h.tokens_per_episode.prompt_ratio.max} (${h.tokens_per_episode.agent.prompt} → ${h.tokens_per_episode.package.prompt})`,
        "≤ 1.0 every seed",
      ],
      [
        "completion tokens per episode",
        `${h.tokens_per_episode.agent.completion} → ${h.tokens_per_episode.package.completion}`,
        "-",
      ],
      [
        "extra lookups per episode",
        `${h.extra_lookups_per_episode.max} (worst seed)`,
        "-",
      ],
      ["refused choices (all seeds)", String(h.refused_choices), "-"],
      [
        "tasks solved (all seeds)",
        `agent ${h.solved.agent}, package ${h.solved.package} of ${h.tasks}`,
        "-",
      ],
    ]),
    "",
    "## The environment port",
    "",
    `Replaying the recorded calls of the ${e.episodes} successful matched episodes on the TypeScript environment: ${e.reproduced} of ${e.calls} calls (${
      (100 * e.rate).toFixed(1)
    }%) give the recorded result; ${e.solved} of ${e.episodes} episodes solve their task by the database rule (the others are paired with another task of the same customer by the task-match file).`,
    "",
    "## Where the package stopped",
    "",
    ...(rows.some((r) => r.stopped.length)
      ? rows.flatMap((r) => r.stopped.map((x) => `- seed ${r.seed}: ${x}`))
      : ["- nowhere"]),
    "",
    "## How to read it",
    "",
    "- The scripted model decides nothing: it answers each request with the next recorded step the request does not already satisfy (a read whose result is in the conversation after the last write is skipped), so the package saves exactly the requests its lookups make unnecessary, and a refused write is repeated as recorded until the conversation stops.",
    "- Both arms run through the same driver (`Conversation`), the same OpenAI binding over HTTP, the same tools and the same user; the agent arm has no package. Tokens are counted by the server for every request (messages, tool schemas as JSON) with the same tokenizer for both arms.",
    "- Held-out tasks: every held-out episode whose task is known (failed recordings included); wrong = a state-changing call the package's run made that the recorded episode did not.",
    "- A stop is the package refusing a state-changing value it cannot justify from what it learned (for example an address the user typed where training saw too few such cases): never a guess, and the task is then not solved.",
  ].join("\n");
}

if (import.meta.main) await loopBench(Deno.args);
