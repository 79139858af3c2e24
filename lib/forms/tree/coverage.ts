/**
 * Held-out replay with a verdict per call: how much of an unseen episode a
 * package reproduces on its own. Each recorded tool call is
 * `deterministic` (the package makes that call, with every argument equal,
 * from refs and constants alone), `residual` (it makes it, but an argument
 * comes from a model leaf — fed here with the recorded choice), `wrong`
 * (it makes that call with different deterministic arguments), or
 * `uncovered` (the package does not make it: a step it dropped as noise, or
 * everything after the package and the episode part ways). The package
 * is walked by the tree engine the runtime runs (`forms/tree/tree_engine.ts`).
 *
 * @module
 */
import { canonicalJson } from "../../trace/canonical_json.ts";
import type { NormEpisode } from "../../lineage/records.ts";
import { coreSteps } from "../core_steps.ts";
import type { Effects } from "../../package/tool_effects.ts";
import type { CompiledBehavior } from "../../package/ir.ts";
import type { ArgExpr } from "./tree_nodes.ts";
import { recordedOutputs } from "./recorded_choice.ts";
import { walkTree } from "./tree_engine.ts";
import { driveTree } from "./tree_drive.ts";
import type {
  ActionNode,
  TreeAnswer,
  TreeHalt,
  TreeRequest,
} from "./tree_requests.ts";

/** Verdicts over one or more episodes. */
export interface Coverage {
  /** Recorded tool calls. */
  calls: number;
  /** Reproduced with no model call. */
  deterministic: number;
  /** Reproduced with a model leaf's value. */
  residual: number;
  /** Made with different deterministic arguments. */
  wrong: number;
  /** Not made by the package. */
  uncovered: number;
  /** Of those: lookups whose results nothing later used (the package has no need for them). */
  uncovered_unneeded: number;
  /** Of those: calls after the package and the episode parted ways, or past the package's end. */
  uncovered_after_divergence: number;
  /** Model leaves the package ran. */
  model_calls: number;
  /** Where episodes parted ways with the package (tool names, counted). */
  divergences: Record<string, number>;
  /** The wrong calls: node, expected and made arguments (first 20). */
  wrong_calls: string[];
}

/** An empty tally. */
export function emptyCoverage(): Coverage {
  return {
    calls: 0,
    deterministic: 0,
    residual: 0,
    wrong: 0,
    uncovered: 0,
    uncovered_unneeded: 0,
    uncovered_after_divergence: 0,
    model_calls: 0,
    divergences: {},
    wrong_calls: [],
  };
}

/** Add one tally into another. */
export function addCoverage(into: Coverage, c: Coverage): void {
  into.calls += c.calls;
  into.deterministic += c.deterministic;
  into.residual += c.residual;
  into.wrong += c.wrong;
  into.uncovered += c.uncovered;
  into.uncovered_unneeded += c.uncovered_unneeded;
  into.uncovered_after_divergence += c.uncovered_after_divergence;
  into.model_calls += c.model_calls;
  for (const [k, v] of Object.entries(c.divergences)) {
    into.divergences[k] = (into.divergences[k] ?? 0) + v;
  }
  const room = Math.max(0, 20 - into.wrong_calls.length);
  into.wrong_calls.push(...c.wrong_calls.slice(0, room));
}

const PARTED: TreeHalt = {
  halt: { status: "stopped", reason: "the package and the episode part ways" },
};

function usesVariable(e: ArgExpr, vars: string[]): boolean {
  const text = "ref" in e ? e.ref : "template" in e ? e.template : "";
  return vars.some((v) =>
    text === v || text.startsWith(`${v}.`) || text.includes(`$${v}]`) ||
    text.includes(`(${v})`) || text.includes(`(${v}.`)
  );
}

/** What {@linkcode coverageOf} replays, and with what. */
export interface CoverageOptions {
  /** A normalized episode the package has not seen. */
  episode: NormEpisode;
  /** Tool effects. */
  effects: Effects;
}

/**
 * Replay one episode and judge every recorded call.
 *
 * @param compiled The compiled behavior (its IR and signatures).
 * @param options The episode and the tool effects.
 * @returns Verdicts.
 */
export function coverageOf(
  compiled: Pick<CompiledBehavior, "ir" | "signatures">,
  options: CoverageOptions,
): Coverage {
  const { episode: ep, effects } = options;
  const { ir } = compiled;
  const core = coreSteps(ep, effects);
  const out = emptyCoverage();
  out.calls = ep.steps.length;
  let cursor = 0;
  let covered = 0;
  const diverge = (what: string) => {
    out.divergences[what] = (out.divergences[what] ?? 0) + 1;
  };
  const judge = (
    node: ActionNode,
    args: Record<string, unknown> | null,
  ): TreeAnswer => {
    const c = core[cursor];
    if (!c) return PARTED;
    if (c.step.logical_tool !== node.tool) {
      diverge(`expected ${node.tool}, episode called ${c.step.logical_tool}`);
      return PARTED;
    }
    const viaModel = Object.values(node.args).some((e) =>
      usesVariable(e, ir.variables)
    );
    const equal = args !== null &&
      canonicalJson(args) === canonicalJson(c.step.arguments);
    if (equal && !viaModel) out.deterministic += c.attempts;
    else if (equal) out.residual += c.attempts;
    else {
      out.wrong += c.attempts;
      out.wrong_calls.push(
        `${ep.episode_id}: ${node.id} made ${node.tool}(${
          args === null ? "unresolved" : canonicalJson(args)
        }), the episode ${canonicalJson(c.step.arguments)}`,
      );
    }
    covered += c.attempts;
    cursor++;
    // Past a wrong call, nothing later is comparable.
    return equal ? { ok: true, result: c.step.result } : PARTED;
  };
  const answer = (req: TreeRequest): TreeAnswer => {
    switch (req.kind) {
      case "predict":
        out.model_calls++;
        return { outputs: recordedOutputs(req.node, core[cursor]?.step) };
      case "call":
        return judge(req.node, req.args);
      case "unresolved":
        return judge(req.node, null);
      case "branch":
        return;
      // Agent-form packages are judged by replayAgent (forms/agent/agent_replay.ts).
      case "react_open":
      case "react":
      case "react_call":
      case "foreign":
        return PARTED;
    }
  };
  const r = driveTree(
    walkTree(ir, {
      input: ep.steps[0]?.state_before.input,
      signatures: compiled.signatures,
      oracle: "recorded",
    }),
    answer,
  );
  if (r.end === "stop_node" && cursor < core.length) {
    diverge(`stop before ${core[cursor].step.logical_tool}`);
  }
  out.uncovered = out.calls - covered;
  const inCore = core.reduce((a, c) => a + c.attempts, 0);
  out.uncovered_unneeded = out.calls - inCore;
  out.uncovered_after_divergence = inCore - covered;
  return out;
}
