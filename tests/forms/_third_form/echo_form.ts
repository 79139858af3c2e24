/**
 * A third form, for the plug-in test (`third_form_test.ts`), in a folder
 * of its own as a form under `lib/forms/` would be: `echo` makes the one
 * call every training episode opened with, with the arguments the first
 * one gave it. Its node kind, compile, replay, explain, run and serve are
 * here; no file of `lib/` names it: a table of forms with it as a row is
 * all it takes.
 *
 * @module
 */
import { canonicalJson } from "../../../lib/trace/canonical_json.ts";
import type { NormEpisode } from "../../../lib/lineage/records.ts";
import { IR_VERSION } from "../../../lib/package/ir.ts";
import { type NodeKind, NodeKinds } from "../../../lib/package/node_kind.ts";
import { checkStructure } from "../../../lib/package/structure_check.ts";
import type { VerificationReport } from "../../../lib/package/verification.ts";
import type { Form } from "../../../lib/forms/form.ts";
import { UnservableError } from "../../../lib/forms/unservable_error.ts";
import { callWithArgs } from "../../../lib/runtime/bind_args.ts";

/** The echo form's one node kind. */
export type EchoNode = {
  id: string;
  kind: "echo";
  tool: string;
  args: Record<string, unknown>;
};

const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

const ECHO: NodeKind<EchoNode> = {
  kind: "echo",
  works: true,
  shapeProblem: (n) =>
    typeof n.tool === "string" && isObj(n.args)
      ? null
      : `echo ${n.id} needs a tool and its args`,
  tools: (n) => [n.tool],
  check: (n, scope) => scope.tool(n.id, n.tool),
  effectProblems: (n, effectOf) =>
    effectOf(n.tool) === "destructive"
      ? [`${n.id}: echo calls ${n.tool}, destructive in the manifest`]
      : [],
  describe: (n) => `echo ${n.tool}(${canonicalJson(n.args)})`,
};

/** The echo form's node kinds. */
export const ECHO_KINDS: NodeKinds = new NodeKinds([ECHO as NodeKind]);

/** What an echo run did. */
export interface EchoRun {
  /** The tool called. */
  tool: string;
  /** What it returned. */
  result: unknown;
}

const rootOf = (ir: { root: string; nodes: Record<string, unknown> }) =>
  ir.nodes[ir.root] as EchoNode | undefined;

/** The echo form. */
export const ECHO_FORM: Form<EchoRun> = {
  name: "echo",
  conversation: false,
  kinds: ECHO_KINDS,
  owns: (ir) => rootOf(ir)?.kind === "echo",
  compile: (normalized: NormEpisode[], options) => {
    const first = normalized.find((e) => e.steps.length)?.steps[0];
    const node: EchoNode = {
      id: "echo",
      kind: "echo",
      tool: first?.logical_tool ?? "none",
      args: first?.arguments ?? {},
    };
    const compiled = {
      ir: {
        schema_version: IR_VERSION,
        name: options.name ?? "behavior",
        root: "echo",
        nodes: { echo: node },
        stores: [],
        variables: [],
        inputs: [],
      },
      signatures: {},
      provenance: [],
      stats: { nodes: 1 },
      required_capabilities: [node.tool],
    };
    const same =
      normalized.filter((e) =>
        e.steps[0]?.logical_tool === node.tool &&
        canonicalJson(e.steps[0].arguments) === canonicalJson(node.args)
      ).length;
    const structural_problems = checkStructure(
      compiled,
      new Set([node.tool]),
      ECHO_KINDS,
    );
    const verification: VerificationReport = {
      structural_ok: structural_problems.length === 0,
      structural_problems,
      replay_checks: normalized.length,
      replay_passed: same,
      problems: normalized.length > same
        ? [`${normalized.length - same} episodes open with another call`]
        : [],
      episodes_replayed: normalized.length,
      episodes_clean: same,
    };
    return { compiled, candidates: [], verification };
  },
  replay: (compiled, { episode }) => {
    const node = rootOf(compiled.ir)!;
    const made = episode.steps[0]?.logical_tool === node.tool &&
      canonicalJson(episode.steps[0].arguments) === canonicalJson(node.args);
    return {
      deterministic: made ? 1 : 0,
      choices: 0,
      model_reads: [],
      wrong: 0,
      stop_reason: null,
      after_stop: 0,
      extra_lookups: 0,
      capped: 0,
      choice_candidates: [],
      model_calls: 0,
      needs_model: episode.steps.map((_, i) => i > 0 || !made),
    };
  },
  lookups: () => [],
  explain: (pkg) => {
    const node = rootOf(pkg.ir)!;
    return [`  it calls ${node.tool} once, always with the same arguments`];
  },
  run: async (pkg, caps) => {
    const node = rootOf(pkg.ir)!;
    const result = await callWithArgs({
      name: node.tool,
      tool: caps.tools[node.tool],
      args: node.args,
    });
    return { tool: node.tool, result };
  },
  describe: (r, pkg) => [`echo run of ${pkg.manifest.name}: ${r.tool}`],
  serve: (pkg) => {
    throw new UnservableError(
      `${pkg.manifest.name}: the echo form has no gateway driver`,
    );
  },
};
