/**
 * Replay of one recorded episode on the tree engine (`tree_engine.ts`, the
 * walker the runtime runs), the verifier's check: recorded tool results
 * stand in for the tools and the recorded choices for residual leaves;
 * every action's arguments must equal the recorded ones, every branch must
 * take the arm of the recorded next call, and the behavior must end where
 * the episode ended.
 *
 * @module
 */
import { canonicalJson } from "../../trace/canonical_json.ts";
import type { NormEpisode } from "../../lineage/records.ts";
import { type CoreStep, coreSteps } from "../core_steps.ts";
import type { Effects } from "../../package/tool_effects.ts";
import type { BehaviorIr, CompiledBehavior } from "../../package/ir.ts";
import { treeNodes } from "./tree_nodes.ts";
import { recordedOutputs } from "./recorded_choice.ts";
import { walkTree } from "./tree_engine.ts";
import { driveTree } from "./tree_drive.ts";
import type {
  TreeAnswer,
  TreeHalt,
  TreeRequest,
  TreeWalkResult,
} from "./tree_requests.ts";

const MISMATCH: TreeHalt = {
  halt: { status: "stopped", reason: "the episode went another way" },
};

/** The first tool a node's subtree calls before any branch (null: none). */
function nextAction(ir: BehaviorIr, id: string): string | null {
  const n = treeNodes(ir)[id];
  if (!n) return null;
  if (n.kind === "action") return n.tool;
  if (n.kind === "sequence") {
    for (const c of n.children) {
      const t = nextAction(ir, c);
      if (t) return t;
    }
  }
  return null;
}

/** One episode replayed on the tree engine. */
export interface EpisodeReplay {
  /** Checks made. */
  checks: number;
  /** Checks passed. */
  passed: number;
  /** Mismatches, each naming the episode and step. */
  problems: string[];
  /** The walk: steps, model leaves, the nodes entered, how it ended. */
  walk: TreeWalkResult;
}

/**
 * Replay one episode on the tree engine (the walker the runtime runs), the
 * episode answering for tools and model leaves: every call must be the
 * recorded one with equal arguments, every branch must take the arm of the
 * recorded next call, and the behavior must end where the episode ended.
 *
 * @param compiled A tree-form compiled behavior (IR and signatures).
 * @param ep A normalized episode.
 * @param options Effects, for finding core steps.
 * @returns Checks, problems and the walk.
 */
export function replayEpisode(
  compiled: Pick<CompiledBehavior, "ir" | "signatures">,
  ep: NormEpisode,
  options: { effects?: Effects } = {},
): EpisodeReplay {
  const judge = new ReplayJudge(
    compiled.ir,
    ep.episode_id,
    coreSteps(ep, options.effects ?? {}),
  );
  const walk = driveTree(
    walkTree(compiled.ir, {
      input: ep.steps[0]?.state_before.input,
      signatures: compiled.signatures,
      oracle: "recorded",
    }),
    (req) => judge.answer(req),
  );
  judge.ended(walk);
  const { checks, passed, problems } = judge;
  return { checks, passed, problems, walk };
}

/** Answers the walk from an episode's core steps, checking as it goes. */
class ReplayJudge {
  checks = 0;
  passed = 0;
  readonly problems: string[] = [];
  #cursor = 0;
  readonly #ir: BehaviorIr;
  readonly #episode: string;
  readonly #core: CoreStep[];

  constructor(ir: BehaviorIr, episode: string, core: CoreStep[]) {
    this.#ir = ir;
    this.#episode = episode;
    this.#core = core;
  }

  #check(ok: boolean, what: string): boolean {
    this.checks++;
    if (ok) this.passed++;
    else {
      this.problems.push(
        `episode ${this.#episode}, step ${
          this.#core[this.#cursor]?.step.index ?? "end"
        }: ${what}`,
      );
    }
    return ok;
  }

  #sameTool(tool: string): boolean {
    const called = this.#core[this.#cursor]?.step.logical_tool;
    return this.#check(
      called === tool,
      `expected ${tool}, the episode called ${called ?? "nothing"}`,
    );
  }

  answer(req: TreeRequest): TreeAnswer {
    const c = this.#core[this.#cursor];
    switch (req.kind) {
      case "predict": // the recorded choice stands in for the model
        return { outputs: recordedOutputs(req.node, c?.step) };
      case "unresolved":
        if (this.#sameTool(req.tool)) {
          this.#check(false, `${req.node.id}: ${(req.error as Error).message}`);
        }
        return MISMATCH;
      case "call":
        if (!this.#sameTool(req.tool)) return MISMATCH;
        this.#check(
          canonicalJson(req.args) === canonicalJson(c.step.arguments),
          `${req.node.id} would call ${req.tool}(${
            canonicalJson(req.args)
          }), the episode called it with ${canonicalJson(c.step.arguments)}`,
        );
        this.#cursor++;
        return { ok: true, result: c.step.result };
      case "branch": {
        const expected = c?.step.logical_tool ?? null;
        const took = nextAction(this.#ir, req.then);
        this.#check(
          took === expected,
          `${req.node.id} on ${req.node.on}=${
            JSON.stringify(req.value)
          } takes the arm of ${took}, the episode called ${expected}`,
        );
        return;
      }
      // React leaves are not replayed; the agent form is replayed by
      // replayAgent (agent_replay.ts).
      case "react_open":
      case "react":
      case "react_call":
      case "foreign":
        return { skip: true };
    }
  }

  /** The end checks: a stop only past the episode's end, no call left over. */
  ended(walk: TreeWalkResult): void {
    const left = this.#core.length - this.#cursor;
    if (walk.end === "stop_node") {
      this.#check(
        left <= 0,
        `the behavior stops (${walk.reason}) where the episode went on`,
      );
    } else if (walk.end === "end") {
      this.#check(
        left === 0,
        `the episode made ${left} more core calls than the behavior`,
      );
    }
  }
}
