/**
 * The tree form ({@linkcode TREE_FORM}): one skeleton of core steps with
 * residual leaves, its node kinds in `tree_kinds.ts`, compiled by
 * `compile_tree.ts`, replayed by `coverage.ts`, explained by
 * `tree_explain.ts`, run live by `BehaviorRuntime` (`behavior_runtime.ts`),
 * served at the model API inside an agent by `TreeGatewayDriver`
 * (`gateway_driver.ts`: the agent runs the calls the tree makes). Its own
 * options ({@linkcode TreeCompileOptions}, {@linkcode TreeCapabilities},
 * {@linkcode TreeRunOptions}) are here.
 *
 * @module
 */
import { assertServable } from "../unservable_error.ts";
import type { BehaviorPackage } from "../../package/package.ts";
import type {
  Form,
  FormRunOptions,
  ReplayMeasure,
  RunCapabilities,
} from "../form.ts";
import { TreeGatewayDriver } from "./gateway_driver.ts";
import { BehaviorRuntime } from "./behavior_runtime.ts";
import { chatModelBinding } from "./chat_binding.ts";
import { compileTree } from "./compile_tree.ts";
import { type Coverage, coverageOf } from "./coverage.ts";
import type { CompilerModel } from "./residualize.ts";
import { explainTree } from "./tree_explain.ts";
import { TREE_KINDS } from "./tree_kinds.ts";
import type { ModelBinding, RunResult } from "./tree_run_types.ts";

/** The tree form's own compile options. */
export interface TreeCompileOptions {
  /** Fact key → contract source ids (lifts to E3). */
  contracts?: Record<string, string[]> | null;
  /** Optional compiler model (wording only). */
  model?: CompilerModel | null;
  /** Its id. */
  compilerModelId?: string | null;
}

/** What a tree package's run is given. */
export interface TreeCapabilities extends RunCapabilities {
  /** The run's input (`text`, `task`, stores). */
  input?: Record<string, unknown>;
  /** The module's own model binding for residual leaves (`chatBinding` wins when given). */
  model?: ModelBinding | null;
}

/** The tree form's own run options. */
export interface TreeRunOptions extends FormRunOptions {
  /** The binding that answers the residual leaves (wins over `chat` and the module's). */
  chatBinding?: ModelBinding | null;
}

/**
 * Describe a tree run for people: its status, each step, the model calls.
 *
 * @param r The run.
 * @param pkg The package.
 * @returns The lines.
 */
function describeTreeRun(r: RunResult, pkg: BehaviorPackage): string[] {
  const lines = [
    `run of ${pkg.manifest.name}: ${r.status}${
      r.reason ? ` (${r.reason})` : ""
    }`,
  ];
  for (const s of r.steps) {
    lines.push(
      `  ${s.node_id.padEnd(16)} ${s.kind.padEnd(8)} ${s.tool ?? ""}${
        s.arguments ? ` ${JSON.stringify(s.arguments)}` : ""
      }${s.attempts && s.attempts > 1 ? ` (${s.attempts} attempts)` : ""}`,
    );
  }
  lines.push(
    `  model calls: ${r.model_calls.length} (${
      r.model_calls.map((m) => m.node_id).join(", ") || "none"
    })`,
  );
  return lines;
}

/**
 * A tree replay as the evaluation measures it: the agent's turns all stay
 * (the tree runs beside them), its model leaves add to them.
 */
function measure(c: Coverage): ReplayMeasure {
  return {
    deterministic: c.deterministic,
    choices: 0,
    model_reads: [],
    wrong: c.wrong,
    stop_reason: null,
    after_stop: 0,
    extra_lookups: 0,
    capped: 0,
    choice_candidates: [],
    model_calls: c.model_calls,
    needs_model: null,
  };
}

/** The tree form. */
export const TREE_FORM: Form<
  RunResult,
  TreeCompileOptions,
  TreeCapabilities,
  TreeRunOptions
> = {
  name: "tree",
  conversation: false,
  kinds: TREE_KINDS,
  owns: (ir) => TREE_KINDS.has(ir.nodes[ir.root]?.kind),
  compile: (normalized, options) => compileTree(normalized, options),
  replay: (compiled, options) => measure(coverageOf(compiled, options)),
  lookups: () => [],
  explain: explainTree,
  run: (pkg, caps, options) => {
    const model = options.chatBinding ??
      (options.chat
        ? chatModelBinding(options.chat, { maxTokens: options.maxTokens })
        : null) ??
      caps.model ?? null;
    const runtime = new BehaviorRuntime(pkg, { tools: caps.tools, model });
    return runtime.run(caps.input ?? {}, {
      sink: options.sink,
      captureId: options.captureId,
      episodeId: options.episodeId,
      outcome: caps.outcome,
    });
  },
  describe: describeTreeRun,
  serve: (pkg) => {
    assertServable(pkg);
    return new TreeGatewayDriver(pkg);
  },
};
