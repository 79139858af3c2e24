/**
 * `ingest.ts demo`: the whole product on the store with the order desk —
 * capture episodes of the task through the tool gateway, report their
 * lineage, compile them, run the package on a fresh instance with tracing
 * on, and report that run.
 *
 * @module
 */
import { resolve } from "node:path";
import { DESK_EFFECTS, generateDeskEpisodes } from "./order_desk.ts";
import { createCapabilities } from "./capabilities.ts";
import { BehaviorRuntime } from "../../lib/forms/tree/behavior_runtime.ts";
import { validatePackage } from "../../lib/forms/validate_package.ts";
import { CaptureCoordinator } from "../../lib/control/coordinator.ts";
import { formatLineage } from "../../lib/cli/format_lineage.ts";
import { type Io, UsageError } from "../../lib/cli/io.ts";
import { openForWrite } from "../../lib/cli/cmd_store.ts";
import { shellLauncher } from "../../lib/installers/hook_command.ts";

function stamp(d: Date): string {
  return d.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
}

/** The contract the demo cites: the desk's refund/cancel policy. */
export const DEMO_CONTRACTS: Record<string, string[]> = {
  "predicate|find_user>list_orders>get_order|get_order#0.status": [
    "policy: delivered orders are refunded in full, pending orders are cancelled",
  ],
};

/** The new instance the demo runs the package on, unless `--seed` says another. */
export const DEMO_INSTANCE = 289_684;

/** Options of {@linkcode demo}. */
export interface DemoOptions {
  /** Clock for the capture id. */
  now?: () => Date;
  /** Which new instance to run the package on (0–999,999). */
  seed?: number;
}

/**
 * `demo`: the whole product on the store — capture episodes of a task
 * through the tool gateway, report their lineage, compile them, run the
 * package on a fresh instance with tracing on, and report that run.
 *
 * @param root Store root.
 * @param json Print JSON.
 * @param io Output.
 * @param options Clock, instance seed.
 * @returns Exit code.
 */
export async function demo(
  root: string,
  json: boolean,
  io: Io,
  options: DemoOptions = {},
): Promise<number> {
  if (
    options.seed !== undefined &&
    !(Number.isInteger(options.seed) && options.seed >= 0 &&
      options.seed < 1_000_000)
  ) {
    throw new UsageError("demo --seed takes a whole number from 0 to 999999");
  }
  const now = (options.now ?? (() => new Date()))();
  const capture = `desk_${stamp(now)}`;
  // The scripted episodes run on a simulated clock from a fixed start and
  // number their events, so two demos print the same apart from the
  // capture id (a timestamp), what hashes it (heads, digests) and paths.
  let tick = Date.parse("2026-01-01T00:00:00.000Z");
  let n = 0;
  const simulated = {
    now: () => new Date(tick += 5),
    newId: () => `evt_${capture}_${++n}`,
  };
  const runCapture = `${capture}_run`;
  using store = openForWrite(root);
  const coord = new CaptureCoordinator(store);
  coord.startCapture({
    id: capture,
    label: "order desk demo",
    activate: false,
  });
  const generated = generateDeskEpisodes(
    store.sink(capture),
    capture,
    200,
    simulated,
  );
  coord.finishCapture(capture);
  const lineage = await coord.lineageReport(capture);
  const compiled = await coord.compile([capture], {
    name: "order_desk",
    taskFamily: "order desk: refund or cancel the order a customer means",
    effects: DESK_EFFECTS,
    contracts: DEMO_CONTRACTS,
  });
  const caps = createCapabilities({
    episode: 1_000_000 + (options.seed ?? DEMO_INSTANCE),
  });
  const runtime = new BehaviorRuntime(validatePackage(compiled.package), caps);
  // The run is recorded in a capture of its own, finished when it ends.
  coord.startCapture({
    id: runCapture,
    label: "order desk demo run",
    activate: false,
  });
  const result = await runtime.run(caps.input, {
    sink: store.sink(runCapture),
    captureId: runCapture,
    episodeId: "run_1",
    outcome: caps.outcome,
  });
  // The run is over: its capture is finished (as the recorded one is).
  coord.finishCapture(runCapture);
  const outcome = caps.outcome();
  const runLineage = await coord.lineageReport(runCapture);
  const where = {
    store: resolve(root),
    capture_spool: resolve(store.spoolPath(capture)),
    package: resolve(compiled.file),
    run_spool: resolve(store.spoolPath(runCapture)),
  };
  if (json) {
    io.out(JSON.stringify(
      {
        capture_id: capture,
        generated,
        lineage: { ...lineage, episodes: lineage.episodes.slice(0, 3) },
        package: {
          digest: compiled.package.digest,
          manifest: compiled.package.manifest,
          verification: compiled.package.verification,
        },
        run: { ...result, outcome },
        run_lineage: runLineage,
        artifacts: where,
      },
      null,
      2,
    ));
    return result.status === "completed" && lineage.chain.ok ? 0 : 1;
  }
  const steps = result.steps.map((s) =>
    `    ${s.node_id.padEnd(16)} ${s.kind.padEnd(8)} ${s.tool ?? ""} ${
      s.arguments ? JSON.stringify(s.arguments) : ""
    }${s.attempts && s.attempts > 1 ? ` (${s.attempts} attempts)` : ""}`
  );
  io.out([
    `1. Captured ${generated.episodes} episodes of the order desk through the tool gateway (${generated.succeeded} succeeded)`,
    `   capture ${capture}: ${lineage.chain.events} events, chain ${
      lineage.chain.ok ? "ok" : "BROKEN"
    }, fidelity ${lineage.fidelity}`,
    "",
    "2. Exact lineage (first episode shown; --json for all):",
    formatLineage({ ...lineage, episodes: lineage.episodes.slice(0, 1) }),
    "",
    "3. Compiled:",
    compiled.summary,
    "",
    `4. Ran the package on a new instance: "${caps.input.text}"`,
    `   status ${result.status}${
      result.reason ? ` (${result.reason})` : ""
    }; model calls ${result.model_calls.length} (${
      result.model_calls.map((m) => m.node_id).join(", ") || "none"
    }); outcome ${outcome.success ? "success" : "failure"}`,
    ...steps,
    "",
    "5. Lineage of the run's own trace:",
    formatLineage(runLineage),
    "",
    "Artifacts:",
    `  store          ${where.store}`,
    `  capture spool  ${where.capture_spool}`,
    `  package        ${where.package}`,
    `  run trace      ${where.run_spool}`,
    `Explain the package: ${
      shellLauncher(Deno.execPath(), Deno.version.deno)
    } task compile explain ${where.package}`,
  ].join("\n"));
  return result.status === "completed" && lineage.chain.ok ? 0 : 1;
}
