/**
 * The closed loop's report as Markdown: one row per seed, the figures over
 * all seeds against their targets, the environment port, where the package
 * stopped, and how to read it.
 *
 * @module
 */
import { renderTable as table } from "../lib/cli/table.ts";
import type { EnvReplay, LoopHeldout, SeedRow } from "./_loop_report.ts";

// Over 80 lines: the report's sections in order, one table each.
/**
 * Render the closed loop's report.
 *
 * @param report The report's header, held-out figures and replay check.
 * @param rows One row per seed.
 * @returns Markdown.
 */
export function renderLoop(
  report: {
    data: string;
    seeds: number;
    mode: string;
    model: string;
    heldout: LoopHeldout;
    env_replay: EnvReplay;
  },
  rows: SeedRow[],
): string {
  const h = report.heldout;
  const e = report.env_replay;
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
