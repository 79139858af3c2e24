/**
 * The gateway loop's report as Markdown (`gateway_loop.md`): the per-seed
 * table, the over-seeds figures beside the done-when targets, each variant
 * (wire, whole or streamed), how the gateway told the runs apart with no
 * header, the closed loop beside it, where arm (b)'s prompt tokens go, the
 * packages, where arm (b) refused or gave up, and the episodes behind a
 * missed target.
 *
 * @module
 */
import { renderTable as table } from "../lib/cli/table.ts";
import {
  type LoopReport,
  type SeedRow,
  TARGETS,
} from "./_gateway_loop_report.ts";

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const yes = (b: boolean) => b ? "yes" : "NO";
const mm = (r: { min: number; max: number }, f = (x: number) => String(x)) =>
  r.min === r.max ? f(r.min) : `${f(r.min)} – ${f(r.max)}`;

function seedTable(rows: SeedRow[]): string {
  return table(
    [
      "seed",
      "variant",
      "tasks",
      "solved a → b",
      "b of a's",
      "wrong (b)",
      "upstream req / ep a → b (×)",
      "agent req / ep a → b",
      "prompt tok / ep a → b (×)",
      "completion tok / ep a → b",
      "served",
      "lookups / ep",
      "extra / ep",
      "refusals",
      "gave up",
      "targets met",
      "wall s (train, compile, a, b)",
    ],
    rows.map((r) => [
      String(r.seed),
      r.variant,
      String(r.tasks),
      `${r.solved.a} → ${r.solved.b}`,
      pct(r.solved.b_of_a),
      String(r.wrong.b),
      `${r.upstream_requests_per_episode.a} → ${r.upstream_requests_per_episode.b} (${r.upstream_requests_per_episode.ratio})`,
      `${r.agent_requests_per_episode.a} → ${r.agent_requests_per_episode.b}`,
      `${r.prompt_tokens_per_episode.a} → ${r.prompt_tokens_per_episode.b} (${r.prompt_tokens_per_episode.ratio})`,
      `${r.completion_tokens_per_episode.a} → ${r.completion_tokens_per_episode.b}`,
      String(r.served_answers),
      String(r.lookups_per_episode),
      String(r.extra_lookups_per_episode),
      String(r.refusals),
      String(r.gave_up),
      r.met
        ? "all"
        : `NO: ${
          Object.entries(r.targets).filter(([, v]) => !v).map(([k]) => k).join(
            ", ",
          )
        }`,
      `${r.wall_s.train}, ${r.wall_s.compile}, ${r.wall_s.a}, ${r.wall_s.b}`,
    ]),
  );
}

// Over 80 lines: the report's sections in order.
/**
 * The report as Markdown.
 *
 * @param rep The report.
 * @returns `gateway_loop.md`.
 */
export function renderReport(rep: LoopReport): string {
  const o = rep.over_seeds;
  const rows = rep.per_seed;
  const openai = rows.filter((r) => r.variant === "openai whole");
  const notes = rows.flatMap((r) => [
    ...r.worse.map((x) =>
      `- seed ${r.seed} (${r.variant}), solved by a, not by b: ${x}`
    ),
    ...r.gave_up_episodes.map((x) =>
      `- seed ${r.seed} (${r.variant}), the gateway gave up: ${x}`
    ),
    ...r.errors.map((x) => `- seed ${r.seed} (${r.variant}), error: ${x}`),
    ...r.pass_through_reasons.map((x) =>
      `- seed ${r.seed} (${r.variant}), passed through: ${x}`
    ),
  ]);
  const missed = rows.filter((r) => !r.met);
  const cl = rep.closed_loop ?? null;
  return [
    "# Gateway loop: the compiled package served by the model gateway inside an unmodified agent (τ² retail)",
    "",
    `Run ${rep.date}; ${rep.data}; ${rep.seeds} split seeds, each through ${
      rep.variants.join(", ")
    }; judged on ${rep.mode}. ${rep.machine}; whole run ${rep.wall_s} s.`,
    ...(rep.fallback ? ["", `**${rep.fallback}.**`] : []),
    "",
    `Agent: an unmodified agent loop on the official \`openai\` client (Chat Completions) or \`@anthropic-ai/sdk\` (Messages), whole answers or streamed, sending τ²-bench's own message list (the system prompt, the agent's greeting "Hi! How can I help you today?" first, then the recorded user's messages in order) and the retail environment's 16 tools, and **no header of ours**: each arm records into its store's active capture (\`capture start\`), each episode is the one the gateway found, read back from the answers to mark outcomes. Model: ${rep.model}. Arm (a): the ingest server's model gateway recording only. Arm (b): the gateway serving the package compiled from arm (a)'s own capture of the training split, where every training task ran twice (the same first request, one run after the other; successful episodes compiled, outcomes marked from τ²'s reward on the episode each run's answers named). Solved: τ²'s database rule.`,
    "",
    seedTable(rows),
    "",
    "## Over every seed and variant, against the done-when targets",
    "",
    table([
      "measure",
      "value (min – max over seeds)",
      "target",
      "met on every seed",
    ], [
      [
        "tasks arm (a) solves that arm (b) solves too",
        mm(o.solved.b_of_a, pct),
        `≥ ${pct(TARGETS.solved_of_a)}`,
        yes(o.met.solved),
      ],
      ["wrong state-changing calls (b)", mm(o.wrong_b), "0", yes(o.met.wrong)],
      [
        "upstream requests, b / a",
        mm(o.upstream_requests_ratio),
        `≤ ${TARGETS.requests_ratio}`,
        yes(o.met.requests),
      ],
      [
        "prompt tokens, b / a",
        mm(o.prompt_ratio),
        `≤ ${TARGETS.prompt_ratio}`,
        yes(o.met.prompt),
      ],
      ["seeds", String(o.seeds), `≥ ${TARGETS.seeds}`, yes(o.met.seeds)],
      [
        "training runs told apart with no header (episodes / runs)",
        `${o.identity.train_episodes} / ${o.identity.train_runs}`,
        "one each",
        yes(o.met.identity),
      ],
      [
        "runs whose answers named more than one episode, or none; episodes two runs shared",
        `${o.identity.split}; ${o.identity.shared}`,
        "0; 0",
        yes(o.identity.split === 0 && o.identity.shared === 0),
      ],
      [
        "upstream requests per episode, a → b",
        `${mm(o.upstream_requests_per_episode.a)} → ${
          mm(o.upstream_requests_per_episode.b)
        }`,
        "-",
        "-",
      ],
      [
        "agent requests per episode, a → b",
        `${mm(o.agent_requests_per_episode.a)} → ${
          mm(o.agent_requests_per_episode.b)
        }`,
        "-",
        "-",
      ],
      [
        "prompt tokens per episode, a → b",
        `${mm(o.prompt_tokens_per_episode.a)} → ${
          mm(o.prompt_tokens_per_episode.b)
        }`,
        "-",
        "-",
      ],
      [
        "completion tokens per episode, a → b",
        `${mm(o.completion_tokens_per_episode.a)} → ${
          mm(o.completion_tokens_per_episode.b)
        }`,
        "-",
        "-",
      ],
      [
        "answers served by the package per seed",
        mm(o.served_answers),
        "-",
        "-",
      ],
      ["refusals per seed", mm(o.refusals), "-", "-"],
      [
        "gave up (words after 3 refused attempts) per seed",
        mm(o.gave_up),
        "-",
        "-",
      ],
      [
        "requests passed through untouched (all seeds)",
        String(o.passed_through),
        "0",
        yes(o.passed_through === 0),
      ],
      [
        "exchanges not recorded (all seeds)",
        String(o.record_misses),
        "0",
        yes(o.record_misses === 0),
      ],
      [
        "tasks solved (all seeds)",
        `a ${o.solved.a}, b ${o.solved.b} of ${o.tasks}`,
        "-",
        "-",
      ],
      ["all targets, every seed", "", "", yes(o.met.all)],
    ]),
    "",
    "## By variant",
    "",
    table(
      [
        "variant",
        "seeds",
        "b of a's",
        "wrong (b)",
        "upstream requests b / a",
        "prompt tokens b / a",
        "all targets",
      ],
      rep.by_variant.map((v) => [
        v.variant,
        String(v.seeds),
        mm(v.b_of_a, pct),
        mm(v.wrong_b),
        mm(v.requests_ratio),
        mm(v.prompt_ratio),
        yes(v.met),
      ]),
    ),
    "",
    ...(cl && cl.length
      ? [
        "## Beside the closed loop (`Conversation`, bench/out/loop.json, same file and seeds; the OpenAI wire, whole answers)",
        "",
        table(
          [
            "seed",
            "b of a's (loop → gateway)",
            "requests × (loop → gateway)",
            "prompt tokens × (loop → gateway)",
          ],
          openai.filter((r) => cl.some((x) => x.seed === r.seed)).map((r) => {
            const c = cl.find((x) => x.seed === r.seed);
            return [
              String(r.seed),
              c ? `${pct(c.solved_of_agent)} → ${pct(r.solved.b_of_a)}` : "-",
              c
                ? `${c.requests_ratio} → ${r.upstream_requests_per_episode.ratio}`
                : "-",
              c
                ? `${c.prompt_ratio} → ${r.prompt_tokens_per_episode.ratio}`
                : "-",
            ];
          }),
        ),
        "",
      ]
      : []),
    "## Where arm (b)'s prompt tokens go",
    "",
    "Per episode, the upstream's prompt split by the meter in front of it: the tool definitions sent (arm (b)'s state-changing tools narrowed, their candidates listed in words), the package's lookups as the agent shows them again on each later request (calls and results), and the rest (system prompt, user, the model's own turns and calls and their results). The last column is arm (b)'s prompt had each of its upstream requests carried arm (a)'s tool definitions.",
    "",
    table(
      [
        "seed",
        "variant",
        "tools / request a → b",
        "tools / ep a → b",
        "lookups shown / ep (b)",
        "rest / ep a → b",
        "prompt × b / a",
        "prompt × with (a)'s tools",
      ],
      rows.map((r) => [
        String(r.seed),
        r.variant,
        `${r.prompt_parts.tools_per_request.a} → ${r.prompt_parts.tools_per_request.b}`,
        `${r.prompt_parts.tools_per_episode.a} → ${r.prompt_parts.tools_per_episode.b}`,
        String(r.prompt_parts.lookups_shown_per_episode),
        `${r.prompt_parts.rest_per_episode.a} → ${r.prompt_parts.rest_per_episode.b}`,
        String(r.prompt_tokens_per_episode.ratio),
        String(r.prompt_parts.ratio_with_a_tools),
      ]),
    ),
    "",
    "## The packages",
    "",
    table(
      [
        "seed",
        "variant",
        "package",
        "training: tasks, runs, episodes recorded, compiled (successful)",
        "lookup nodes",
        "not recorded",
      ],
      rows.map((r) => [
        String(r.seed),
        r.variant,
        r.package,
        `${r.train.tasks}, ${r.train.runs}, ${r.train.captured}, ${r.train.compiled}`,
        r.lookup_nodes.map((x) => x.replace(/^lookup_/, "")).join(", "),
        String(r.record_misses),
      ]),
    ),
    "",
    "## Where arm (b) refused, gave up, or did worse",
    "",
    ...(notes.length ? notes : ["- nowhere"]),
    "",
    ...(missed.length
      ? [
        "## Seeds that missed a target: the episodes where (b) paid more prompt tokens than (a)",
        "",
        ...missed.flatMap((r) => [
          `- seed ${r.seed} (${r.variant}): ${
            Object.entries(r.targets).filter(([, v]) => !v).map(([k]) => k)
              .join(", ")
          } missed; lookup nodes ${r.lookup_nodes.join(", ")}`,
          ...r.costliest.map((x) =>
            `  - ${x.id}: prompt ${x.prompt.a} → ${x.prompt.b} (tool definitions ${x.tools.a} → ${x.tools.b}, lookups shown ${x.shown}), upstream requests ${x.requests.a} → ${x.requests.b}, lookups ${x.lookups} (${x.extra} extra)`
          ),
        ]),
        "",
      ]
      : []),
    "## How to read it",
    "",
    "- No header of ours: the agents send none; the captures are the arms' active ones, the episodes those the gateway found by the conversation (a request continues a conversation only when it begins with that conversation's last request and the answer it got). The agents read the episode each answer names (the gateway's response header) to mark outcomes, as a user would; the bench reads which answers the package served the same way.",
    "- The scripted model decides nothing: it answers each request with the next recorded step the request does not already satisfy (a read whose result is in the conversation after the last write is skipped), so the package saves exactly the upstream requests its served lookups make unnecessary, and a refused write is repeated as recorded, so a refusal ends in the gateway's words after two re-asks.",
    "- Upstream requests and tokens are the scripted server's own count of what reached it (re-asks after a refusal included); agent requests are what the agent sent to the gateway (the package's own answers included). Served: answers the package made itself (due lookups, no upstream request).",
    "- Wrong: a state-changing call the agent ran that the recorded episode did not make (each recorded call matches once). Extra lookups: served calls the recorded episode never made.",
    `- The upstream: each gateway has one upstream base URL, so each arm reads one script id of the scripted server, replaced before each episode (\`addScript\`: ${rep.setup.add_script_ms} ms); one ingest server per script (a fresh store, start and close) costs ${rep.setup.server_per_script_ms} ms per episode.`,
    "- Nothing was tuned on the tasks judged: the package is the compiler's own (tuned by cross-validation on its training episodes); `--validate` judges on a validation part of the training split instead, for changes.",
    "- The scripted model replays the recording whatever the tools say, so the candidates the narrowed schemas list in words are paid for here (tool definitions per request) but never change what the model does: this loop measures their cost, not their worth to a live model.",
    "- Beside the closed loop: the same packages' drivers differ in what the model reads. This loop's agent sends each tool's answer as τ² recorded it (`RetailEnv.respond`: Python `json.dumps` spacing), `Conversation` sends compact JSON, so every result (the package's lookups included) costs more tokens here; and where the gateway gives up after refusals the agent's conversation goes on (the closed loop stops it).",
  ].join("\n");
}
