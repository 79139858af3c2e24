/**
 * One seed of the gateway loop (`gateway_loop.ts`) on one wire, whole or
 * streamed: the training tasks run through arm (a)'s gateway into a capture
 * of their own, their outcomes marked (τ²'s recorded reward, on the episode
 * each run's answers named), the capture's successful episodes compiled, an
 * arm (b) gateway opened to serve the package, and each judged task run
 * through both arms — through arm (a) twice, one run after the other,
 * sending the same first request. No header of ours is sent: each arm's
 * capture is its store's active capture (`capture start`), each episode the
 * one the gateway found; every run must have named one episode of its own.
 *
 * @module
 */
import type { HarnessStore } from "../lib/store/mod.ts";
import { CaptureCoordinator } from "../lib/control/coordinator.ts";
import { loadEpisodes } from "../lib/lineage/episodes.ts";
import type { Episode } from "../lib/lineage/records.ts";
import { compileBehavior } from "../lib/compiler/compile_behavior.ts";
import { formOf } from "../lib/forms/form_table.ts";
import type { TauData } from "../eval/tau_data.ts";
import { splitFor } from "../eval/split_eval.ts";
import {
  type Script,
  scriptFromTau2,
  type Tau2Simulation,
} from "../eval/scripted_model.ts";
import type { ServedPackage } from "../lib/model_gateway/serving.ts";
import { type AnthropicClient, loadAnthropic } from "./_anthropic_sdk.ts";
import {
  type Arm,
  type ArmResult,
  type EpisodeContext,
  type LoopWire,
  runEpisode,
} from "./_gateway_episode.ts";
import type { LoopSeedRun } from "./_gateway_loop_report.ts";

/** Everything the seeds share. */
export interface SeedSetup extends EpisodeContext {
  /** The loaded τ² file. */
  data: TauData;
  /** Its simulations, in file order. */
  simulations: Tau2Simulation[];
  /** Judge on the validation part of the training split. */
  validate: boolean;
  /** Runs of each training task. @default TRAIN_RUNS */
  trainRuns?: number;
  /** Arm (a): one gateway recording every seed's captures. */
  armA: Arm;
  /** Arm (a)'s store. */
  armAStore: HarnessStore;
  /** Opens an arm (b) gateway serving a package (its own store). */
  openArmB: (
    pkg: ServedPackage,
  ) => Promise<
    Arm & { store: HarnessStore; [Symbol.asyncDispose](): Promise<void> }
  >;
}

/**
 * Training runs per task by default. Two (the same first request) tell
 * runs apart as well, but the compiler counts the copies as more evidence
 * (on validation its narrowed schemas grew from ~2,380 to ~3,150 tokens
 * per request), so the repeated runs are arm (a)'s judged ones instead.
 */
export const TRAIN_RUNS = 1;

/** Runs of each judged task through arm (a) (the same first request each time). */
export const ARM_A_RUNS = 2;

/** The outcome an episode's capture holds (`episode.outcome`), or null. */
function outcomeOf(ep: Episode): boolean | null {
  const ev = ep.events.findLast((x) =>
    x.kind === "annotation" && x.payload.type === "episode.outcome"
  );
  return ev ? ev.payload.success === true : null;
}

/**
 * An Anthropic client of a gateway.
 *
 * @param url The gateway's URL (the SDK's base URL).
 * @returns The client.
 */
export async function anthropicClient(url: string): Promise<AnthropicClient> {
  const Anthropic = await loadAnthropic();
  return new Anthropic({
    baseURL: url,
    apiKey: "sk-bench-not-a-key",
    maxRetries: 0,
  });
}

// Over 80 lines: one seed in the order it runs (training capture, compile, arm (b)'s gateway, held-out episodes).
/**
 * One seed on one wire: arm (a)'s training capture, its outcomes, the
 * compile, arm (b)'s gateway, then each judged episode through both arms.
 *
 * @param setup What the seeds share.
 * @param seed Split seed.
 * @param wire Client and route.
 * @returns The seed's runs.
 * @throws {Error} When the compiler chose the tree form.
 */
export async function runSeed(
  setup: SeedSetup,
  seed: number,
  wire: LoopWire,
  stream: boolean,
): Promise<LoopSeedRun> {
  const t0 = performance.now();
  const { train, held } = splitFor(setup.data.episodes, seed, {
    validate: setup.validate,
  });
  const index = new Map(setup.data.episodes.map((e, i) => [e.id, i]));
  const scriptOf = (id: string): Script =>
    scriptFromTau2(setup.simulations[index.get(id)!]);
  const prefix = `${wire}${stream ? "_stream" : ""}_s${seed}`;
  const trainCapture = `${prefix}_train`;
  const trainStatus: Record<string, string> = {};
  const coordinator = new CaptureCoordinator(setup.armAStore);
  coordinator.startCapture({ id: trainCapture, activate: true });
  const identity = { runs: 0, named: 0, split: 0, shared: 0 };
  const seen = new Map<string, number>();
  const outcomes: { episode: string; reward: number }[] = [];
  for (const e of train) {
    const sim = setup.simulations[index.get(e.id)!] as Tau2Simulation & {
      reward_info?: { reward?: number };
    };
    for (let k = 0; k < (setup.trainRuns ?? TRAIN_RUNS); k++) {
      const r = await runEpisode(setup, {
        arm: setup.armA,
        wire,
        stream,
        episode: e,
        script: scriptOf(e.id),
      });
      identity.runs++;
      if (r.status.startsWith("error")) trainStatus[e.id] = r.status;
      if (r.episodes.length !== 1 || r.unnamed > 0) identity.split++;
      for (const id of r.episodes) seen.set(id, (seen.get(id) ?? 0) + 1);
      // The outcome goes on the episode the run's answers named, as a
      // user marks it.
      if (r.episodes.length > 0) {
        outcomes.push({
          episode: r.episodes[0],
          reward: sim.reward_info?.reward ?? 0,
        });
      }
    }
  }
  identity.named = seen.size;
  identity.shared = [...seen.values()].filter((n) => n > 1).length;
  await setup.armA.server.modelGateway!.settled();
  const trainMs = performance.now() - t0;
  for (const o of outcomes) {
    coordinator.markOutcome(trainCapture, o.episode, {
      success: o.reward >= 1,
      outcome: { reward: o.reward },
    });
  }
  const captured = await loadEpisodes(setup.armAStore, trainCapture);
  const ok = captured.filter((ep) => outcomeOf(ep) === true);
  const tc = performance.now();
  const compiled = compileBehavior(ok, { name: "tau", effects: setup.effects });
  const compileMs = performance.now() - tc;
  const pkg = compiled.package;
  if (formOf(pkg.ir).name !== "agent") {
    throw new Error(
      `seed ${seed}: the compiler chose the tree form; the gateway serves agent-form packages`,
    );
  }
  await using armB = await setup.openArmB(formOf(pkg.ir).serve(pkg));
  if (wire === "anthropic") {
    armB.anthropic = await anthropicClient(armB.server.url);
  }
  const heldCapture = `${prefix}_heldout`;
  coordinator.startCapture({ id: heldCapture, activate: true });
  new CaptureCoordinator(armB.store).startCapture({
    id: heldCapture,
    activate: true,
  });
  const episodes: LoopSeedRun["episodes"] = [];
  for (const e of held) {
    if (!e.truth.length) continue;
    const script = scriptOf(e.id);
    const a = await runEpisode(setup, {
      arm: setup.armA,
      wire,
      stream,
      episode: e,
      script,
    });
    // Again, the same first request: a run of its own, in its own episode.
    const again: ArmResult[] = [];
    for (let k = 1; k < ARM_A_RUNS; k++) {
      again.push(
        await runEpisode(setup, {
          arm: setup.armA,
          wire,
          stream,
          episode: e,
          script,
        }),
      );
    }
    const b = await runEpisode(setup, {
      arm: armB,
      wire,
      stream,
      episode: e,
      script,
    });
    episodes.push({
      id: e.id,
      recorded_success: e.norm.success === true,
      a,
      a_again: again.map((r) => ({
        solved: r.solved,
        episodes: r.episodes,
        unnamed: r.unnamed,
      })),
      b,
    });
  }
  await setup.armA.server.modelGateway!.settled();
  await armB.server.modelGateway!.settled();
  return {
    seed,
    wire,
    stream,
    train: train.length,
    train_runs: identity.runs,
    train_identity: identity,
    train_captured: captured.length,
    train_compiled: ok.length,
    train_errors: trainStatus,
    lookups: formOf(pkg.ir).lookups(pkg.ir),
    package: pkg.manifest.name + "@" + pkg.digest.slice(7, 19),
    train_ms: Math.round(trainMs),
    compile_ms: Math.round(compileMs),
    record_misses: setup.armA.server.modelGateway!.stats.record_misses +
      armB.server.modelGateway!.stats.record_misses,
    episodes,
    wall_ms: Math.round(performance.now() - t0),
  };
}
