/**
 * The tree form ({@linkcode TREE_FORM}): one skeleton of core steps with
 * residual leaves, compiled by `compile_tree.ts`, replayed by
 * `coverage.ts`, run live by `BehaviorRuntime` (`behavior_runtime.ts`),
 * served at the model API inside an agent by `TreeGatewayDriver`
 * (`gateway_driver.ts`: the agent runs the calls the tree makes).
 *
 * @module
 */
import { assertServable } from "../unservable_error.ts";
import type { BehaviorPackage } from "../../package/package.ts";
import type { Form } from "../form.ts";
import { TreeGatewayDriver } from "./gateway_driver.ts";
import { BehaviorRuntime } from "./behavior_runtime.ts";
import { chatModelBinding } from "./chat_binding.ts";
import { compileTree } from "./compile_tree.ts";
import { type Coverage, coverageOf } from "./coverage.ts";
import type { RunResult } from "./tree_run_types.ts";

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

/** The tree form. */
export const TREE_FORM: Form<"tree", RunResult, Coverage> = {
  name: "tree",
  conversation: false,
  owns: (ir) => ir.nodes[ir.root]?.kind !== "agent",
  compile: (normalized, options) => compileTree(normalized, options),
  replay: (compiled, options) => coverageOf(compiled, options),
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
