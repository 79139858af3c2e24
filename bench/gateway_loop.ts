/**
 * The closed loop through the model gateway (issue 33, item 4; issue 42,
 * item 5: no header of ours):
 * `deno task bench gateway --loop [--seeds N] [--variants LIST] [--json]
 * [--data FILE] [--db FILE] [--match FILE] [--out DIR] [--validate]`
 * (8 seeds by default, each through every variant: `openai`,
 * `openai_stream`, `anthropic`, `anthropic_stream`). `--validate` sets the
 * held-out split aside untouched and judges on a validation part of the
 * training split (seed + 1000, as `deno task bench loop --validate` does),
 * into `bench/out/gateway_loop_validate/`: where a change to the compiler,
 * the driver or the gateway is judged.
 *
 * Each held-out τ² retail task is driven by an unmodified agent loop on an
 * official client (`_retail_agents.ts`: `openai` Chat Completions or
 * `@anthropic-ai/sdk` Messages, whole or streamed) with the retail
 * environment's tools, τ²'s own message list (the agent's greeting first)
 * and the recorded user; it sends no header of ours (each arm records into
 * its store's active capture, `capture start`; the episode is the one the
 * gateway finds, named in each answer). Its model is the scripted model
 * (the recorded agent, replayed; `_scripted_anthropic.ts` for Messages),
 * reached through the ingest server's model gateway, in two arms:
 *
 * - (a) the gateway recording only;
 * - (b) the gateway serving the package compiled from arm (a)'s own
 *   capture of the training split: the training tasks run through arm
 *   (a)'s gateway into a capture of their own — every task twice, the same
 *   first request each time — their outcomes are marked on the episodes
 *   the answers named (τ²'s recorded reward, as a user marks outcomes), and
 *   the capture's successful episodes are compiled (`compileBehavior`, as
 *   the closed loop compiles the training split's successful episodes).
 *
 * Figures, targets and the analysis go to `<out>/gateway_loop.md` (and
 * `.json` with `--json`); see `_gateway_loop_report.ts`.
 *
 * Each gateway has one upstream base URL, so each arm reads one script id
 * of the scripted server, replaced before each episode (`addScript`);
 * the start measures that against one ingest server per script. The
 * gateways reach the scripted servers through a meter
 * (`_upstream_meter.ts`) that splits the prompt into tool definitions, the
 * package's lookups shown again, and the rest.
 *
 * @module
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import OpenAI from "openai";
import { HarnessStore } from "../lib/store/mod.ts";
import { IngestServer } from "../lib/ingest/server.ts";
import { changesState, type Effects } from "../lib/package/tool_effects.ts";
import { effectFromAnnotations } from "../lib/compiler/effects.ts";
import {
  tau2DomainTools,
  tau2ToolAnnotations,
} from "../lib/importers/tau2_tool_types.ts";
import { loadTauData, type TauData } from "../eval/tau_data.ts";
import { scriptFromTau2, type Tau2Simulation } from "../eval/scripted_model.ts";
import { startScriptedModelServer } from "../eval/scripted_model_server.ts";
import type { ServedPackage } from "../lib/model_gateway/serving.ts";
import { startScriptedAnthropic } from "./_scripted_anthropic.ts";
import { startUpstreamMeter } from "./_upstream_meter.ts";
import type { Arm, LoopWire } from "./_gateway_episode.ts";
import {
  anthropicClient,
  runSeed,
  type SeedSetup,
} from "./_gateway_loop_seed.ts";
import {
  buildReport,
  type ClosedLoopRow,
  type LoopSeedRun,
  type RunInfo,
} from "./_gateway_loop_report.ts";
import { renderReport } from "./_gateway_loop_md.ts";

const HERE = dirname(fileURLToPath(import.meta.url));
const SHARED_DATA = join(
  HERE,
  "../../shared/datasets/tau-traces/tau2-bench/retail/toolorchestra_retail_1trial.json",
);
const FIXTURE_DATA = join(HERE, "../fixtures/tau2_retail_slice.json");
const FIXTURE_DB = join(HERE, "../fixtures/tau2_retail_db.json");
const DEFAULT_INSTRUCTIONS = "You are a retail customer service agent.";
/** Seeds by default (each through every variant). */
const DEFAULT_SEEDS = 8;

/** Wire and streaming of each variant. */
const VARIANTS: Record<string, { wire: LoopWire; stream: boolean }> = {
  openai: { wire: "openai", stream: false },
  openai_stream: { wire: "openai", stream: true },
  anthropic: { wire: "anthropic", stream: false },
  anthropic_stream: { wire: "anthropic", stream: true },
};

/**
 * τ²-bench's declared retail tool types, then the file's own effects, then
 * `calculate` and `get_item_details` as reads: the package must know every
 * tool the agent offers (else the gateway passes the request through).
 */
function servedEffects(data: TauData): Effects {
  const declared = Object.fromEntries(
    tau2DomainTools("retail").map((t) => [
      t,
      effectFromAnnotations(tau2ToolAnnotations("retail", t))!,
    ]),
  );
  return {
    ...declared,
    ...data.effects,
    calculate: "read",
    get_item_details: "read",
  };
}

async function openServer(
  store: HarnessStore,
  upstreams: { openai: string; anthropic: string },
  packages?: Record<string, ServedPackage>,
): Promise<IngestServer> {
  const server = new IngestServer(store, {
    port: 0,
    modelGateway: {
      upstreamOpenai: upstreams.openai,
      upstreamAnthropic: upstreams.anthropic,
      ...(packages ? { packages } : {}),
    },
  });
  await server.start();
  return server;
}

function clientsOf(url: string): { openai: OpenAI } {
  return {
    openai: new OpenAI({
      baseURL: `${url}/v1`,
      apiKey: "sk-bench-not-a-key",
      maxRetries: 0,
    }),
  };
}

/** Time n runs of `f`, ms each. */
async function timeEach(n: number, f: () => Promise<void> | void) {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await f();
  return (performance.now() - t0) / n;
}

// Over 80 lines: arguments, data, the upstreams and arm (a), the setup measurement, the seeds, the report.
/**
 * Run the gateway loop.
 *
 * @param args Command-line words after `gateway` (`--loop` among them).
 * @returns The JSON report.
 */
export async function gatewayLoop(
  args: string[],
): Promise<Record<string, unknown>> {
  const { values } = parseArgs({
    args,
    options: {
      loop: { type: "boolean", default: false },
      data: { type: "string" },
      db: { type: "string" },
      match: { type: "string" },
      seeds: { type: "string" },
      variants: { type: "string", default: Object.keys(VARIANTS).join(",") },
      validate: { type: "boolean", default: false },
      json: { type: "boolean", default: false },
      out: { type: "string" },
    },
  });
  const started = new Date();
  let dataPath = values.data ?? SHARED_DATA;
  let fallback: string | null = null;
  let dbPath = values.db ??
    join(dirname(dataPath), "../domains/retail/db.json");
  if (!values.data && !(await exists(SHARED_DATA))) {
    fallback =
      `../shared/datasets/tau-traces is absent: ran on the repository's slice (fixtures/tau2_retail_slice.json, its task match and fixtures/tau2_retail_db.json; a one-line system prompt, the policy is not in fixtures/), not the full file, so the figures are not comparable with the full file's`;
    dataPath = FIXTURE_DATA;
    dbPath = values.db ?? FIXTURE_DB;
  }
  const text = await Deno.readTextFile(dataPath);
  const matchPath = values.match ??
    dataPath.replace(/(_1trial)?\.json$/, "_task_match.json");
  const matchText = await Deno.readTextFile(matchPath).catch(() => null);
  const db = JSON.parse(await Deno.readTextFile(dbPath));
  const instructions = await Deno.readTextFile(
    join(dirname(dbPath), "policy.md"),
  ).catch(() => DEFAULT_INSTRUCTIONS);
  const data = loadTauData(text, { matchText });
  const simulations = JSON.parse(text).simulations as Tau2Simulation[];
  const effects = servedEffects(data);
  const writes = new Set(
    Object.keys(effects).filter((t) => changesState(effects, t)),
  );
  await using chat = startScriptedModelServer({ writes });
  await using anthropic = startScriptedAnthropic({ writes });
  const chatUrl = (id: string) =>
    chat.addScript({ id, greeting: null, users: [], turns: [] });
  const anthropicUrl = (id: string) =>
    anthropic.addScript({ id, greeting: null, users: [], turns: [] });
  await using meter = startUpstreamMeter({
    openai: chat.url,
    anthropic: anthropic.url,
  });
  const upstreamsOf = (id: string) => {
    chatUrl(id);
    anthropicUrl(id);
    const base = `${meter.url}/s/${encodeURIComponent(id)}`;
    return { openai: `${base}/v1`, anthropic: base };
  };
  const tmp = await Deno.makeTempDir({ prefix: "gateway_loop_" });
  try {
    const armAStore = new HarnessStore(join(tmp, "arm_a"), {
      role: "ingest-server",
    });
    const armAServer = await openServer(armAStore, upstreamsOf("arm_a"));
    const n = Number(values.seeds ?? DEFAULT_SEEDS);
    const variants = values.variants.split(",").map((v) => v.trim()).filter(
      (v) => v !== "",
    );
    for (const v of variants) {
      if (!(v in VARIANTS)) {
        throw new RangeError(
          `Unknown variant "${v}": use ${Object.keys(VARIANTS).join(", ")}`,
        );
      }
    }
    const armA: Arm = {
      server: armAServer,
      ...clientsOf(armAServer.url),
      anthropic: await anthropicClient(armAServer.url),
      scriptId: "arm_a",
    };
    let armBs = 0;
    const setup: SeedSetup = {
      validate: values.validate,
      data,
      simulations,
      db,
      instructions,
      effects,
      meter,
      upstreams: {
        addScript: (wire, script) =>
          void (wire === "openai" ? chat : anthropic).addScript(script),
        stats: (wire, id) => (wire === "openai" ? chat : anthropic).stats(id),
      },
      armA,
      armAStore,
      openArmB: async (pkg) => {
        const root = join(tmp, `arm_b_${++armBs}`);
        const store = new HarnessStore(root, { role: "ingest-server" });
        const server = await openServer(store, upstreamsOf("arm_b"), {
          "": pkg,
        });
        return {
          server,
          store,
          ...clientsOf(server.url),
          anthropic: null,
          scriptId: "arm_b",
          [Symbol.asyncDispose]: async () => {
            await server.close();
            store.close();
            await Deno.remove(root, { recursive: true });
          },
        };
      },
    };
    // One script id replaced per episode, or one ingest server per script?
    const addScriptMs = await timeEach(200, () => {
      chat.addScript({ ...scriptFromTau2(simulations[0]), id: "probe" });
    });
    const serverPerScriptMs = await timeEach(5, async () => {
      const root = join(tmp, "probe");
      const store = new HarnessStore(root, { role: "ingest-server" });
      const server = await openServer(store, upstreamsOf("probe"));
      await server.close();
      store.close();
      await Deno.remove(root, { recursive: true });
    });
    const runs: LoopSeedRun[] = [];
    for (let s = 1; s <= n; s++) {
      for (const v of variants) {
        const { wire, stream } = VARIANTS[v];
        runs.push(await runSeed(setup, s, wire, stream));
        console.error(
          `gateway loop: seed ${s}/${n} (${v}) in ${
            (runs.at(-1)!.wall_ms / 1000).toFixed(1)
          } s`,
        );
      }
    }
    await armAServer.close();
    armAStore.close();
    const closedLoop = await closedLoopRows(
      join(HERE, "out/loop.json"),
      shortPath(dataPath),
    );
    const info: RunInfo = {
      date: started.toISOString(),
      data: fallback ? "fixtures/tau2_retail_slice.json" : shortPath(dataPath),
      fallback,
      seeds: n,
      variants,
      mode: values.validate
        ? "the validation part of the training split (split again with seed + 1000; the held-out split set aside untouched)"
        : "the held-out tasks",
      machine: await machineNote(),
      wall_s: Math.round((Date.now() - started.getTime()) / 100) / 10,
      setup: {
        add_script_ms: Math.round(addScriptMs * 1000) / 1000,
        server_per_script_ms: Math.round(serverPerScriptMs * 10) / 10,
      },
      closed_loop: fallback || values.validate ? null : closedLoop,
    };
    const report = buildReport(info, runs);
    const md = renderReport(report);
    const out = values.out ??
      join(HERE, values.validate ? "out/gateway_loop_validate" : "out");
    await Deno.mkdir(out, { recursive: true });
    await Deno.writeTextFile(join(out, "gateway_loop.md"), md + "\n");
    if (values.json) {
      await Deno.writeTextFile(
        join(out, "gateway_loop.json"),
        JSON.stringify(report, null, 2) + "\n",
      );
    }
    console.log(values.json ? JSON.stringify(report, null, 2) : md);
    return report;
  } finally {
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }
}

/** The closed loop's held-out seeds on the same file (loop.json), if any. */
async function closedLoopRows(
  file: string,
  data: string,
): Promise<ClosedLoopRow[] | null> {
  try {
    const j = JSON.parse(await Deno.readTextFile(file));
    if (j.data !== data || j.mode !== "held-out") return null;
    return (j.per_seed as {
      seed: number;
      solved: { package_of_agent: number };
      model_calls_per_episode: { agent: number; package: number };
      tokens_per_episode: {
        agent: { prompt: number };
        package: { prompt: number };
      };
    }[]).map((r) => ({
      seed: r.seed,
      solved_of_agent: r.solved.package_of_agent,
      requests_ratio: Math.round(
        10000 * r.model_calls_per_episode.package /
          r.model_calls_per_episode.agent,
      ) / 10000,
      prompt_ratio: Math.round(
        10000 * r.tokens_per_episode.package.prompt /
          r.tokens_per_episode.agent.prompt,
      ) / 10000,
    }));
  } catch {
    return null;
  }
}

function shortPath(p: string): string {
  return p.split("/").slice(-3).join("/");
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

/** Deno, cores, CPU model, OS. */
async function machineNote(): Promise<string> {
  const cpu = await Deno.readTextFile("/proc/cpuinfo").then((t) =>
    /model name\s*:\s*(.+)/.exec(t)?.[1]?.trim() ?? null
  ).catch(() => null);
  return [
    `deno ${Deno.version.deno}`,
    `${navigator.hardwareConcurrency} cores${cpu ? ` (${cpu})` : ""}`,
    `${Deno.build.os} ${Deno.build.arch}`,
    "one process, episodes one after another, other work on the machine at the same time",
  ].join(", ");
}

if (import.meta.main) await gatewayLoop(Deno.args);
