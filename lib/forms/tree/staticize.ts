/**
 * Staticization: the control skeleton comes from the
 * successful episodes' core steps (retries collapsed, noise dropped),
 * merged into a prefix tree by tool; instance values become refs; a fork
 * becomes a deterministic branch when an uncontested predicate explains it
 * (and, when an arm starts with a destructive tool, only at E3); known
 * recovery is wrapped as bounded retries; what stays genuine judgment
 * becomes a typed residual leaf — a `predict` of a list index followed by
 * a symbolic ref (`orders[$sel].order_id`), of an argument value, or of a
 * branch arm.
 *
 * @module
 */
import type { NormEpisode } from "../../lineage/records.ts";
import { synthNodeId, synthStore } from "../../lineage/normalize.ts";
import type { Effects } from "../../package/tool_effects.ts";
import { factKey } from "./facts.ts";
import type { Candidate } from "../../package/candidate.ts";
import type { BehaviorIr, CompiledBehavior } from "../../package/ir.ts";
import type { Recovery } from "./tree_nodes.ts";
import { IR_VERSION } from "../../package/ir.ts";
import type { CompilerModel } from "./residualize.ts";
import {
  type SkeletonContext,
  skeletonContext,
  type Trie,
} from "./skeleton.ts";
import { compileArgs } from "./skeleton_args.ts";
import { buildBranch } from "./skeleton_branch.ts";

/** Options of {@linkcode staticize}. */
export interface StaticizeOptions {
  /**
   * Behavior name.
   * @default "behavior"
   */
  name?: string;
  /** A compiler model (wording of residual signatures only). */
  model?: CompilerModel | null;
  /** Its id, recorded in the manifest. */
  compilerModelId?: string | null;
  /** Tool effects: `read`, `write`, `destructive`. */
  effects?: Effects;
}

/**
 * Recovery of the action at `t`: retry on the codes its episodes recovered
 * from, up to the most attempts seen (at most 5), only when every such
 * recovery candidate is uncontested (those are appended to `used`).
 */
function recoveryOf(
  ctx: SkeletonContext,
  t: Trie,
  used: Candidate[],
): Recovery | null {
  const codes = new Set<string>();
  let attempts = 1;
  for (const m of t.members) {
    const c = ctx.cores[m.ep][m.idx];
    c.recovered.forEach((x) => codes.add(x));
    attempts = Math.max(attempts, c.attempts);
  }
  const recCands = [...codes].sort().map((code) =>
    ctx.byKey.get(factKey(["recovery", t.tool, code]))
  );
  if (codes.size && recCands.every((c) => c && c.status !== "contested")) {
    for (const c of recCands) used.push(c!);
    const max = Math.max(
      attempts,
      ...recCands.map((c) => Number(c!.claim.max_attempts) || 1),
    );
    return { retry_on: [...codes].sort(), max_attempts: Math.min(max, 5) };
  }
  return null;
}

/** Build the action for trie node `t` and everything after it. */
function buildAction(
  ctx: SkeletonContext,
  t: Trie,
  scope: Map<string, string>,
): string[] {
  const at = t.path;
  const index = ctx.actions++;
  const nodeId = synthNodeId(t.tool, index);
  const store = synthStore(t.tool, index);
  const ids: string[] = [];
  const used: Candidate[] = [];
  const prevPath = at.includes(">")
    ? at.slice(0, at.lastIndexOf(">"))
    : "start";
  const fixed = ctx.byKey.get(factKey(["fixed_action", prevPath]));
  if (fixed && fixed.status !== "contested") used.push(fixed);
  const args = compileArgs(ctx, { trie: t, nodeId, scope, used, ids });
  const recovery = recoveryOf(ctx, t, used);
  ctx.nodes[nodeId] = {
    id: nodeId,
    kind: "action",
    tool: t.tool,
    args,
    store,
    effect: ctx.effects[t.tool] ?? "write",
    recovery,
  };
  ids.push(nodeId);
  ctx.stores.push(store);
  for (const m of t.members) {
    ctx.storeMaps[m.ep].set(ctx.cores[m.ep][m.idx].step.store!, store);
  }
  const nextScope = new Map(scope).set(store, store);
  ctx.provenanceOf(
    nodeId,
    used,
    t.members,
    `${t.tool} is called by ${t.members.length} successful episodes at this point`,
  );
  // What follows.
  const children = ctx.keptChildren(t);
  if (children.length === 1) {
    ids.push(...buildAction(ctx, children[0], nextScope));
  } else if (children.length > 1) {
    ids.push(
      ...buildBranch(ctx, {
        trie: t,
        at,
        children,
        scope: nextScope,
        buildFrom: (c, s) => buildAction(ctx, c, s),
      }),
    );
  }
  return ids;
}

/**
 * Build the behavior IR from episodes and candidates.
 *
 * @param episodes Normalized episodes (the successful ones shape the skeleton).
 * @param candidates Consolidated candidates.
 * @param options Name, compiler model, effects.
 * @returns The compiled behavior.
 */
export function staticize(
  episodes: NormEpisode[],
  candidates: Candidate[],
  options: StaticizeOptions = {},
): CompiledBehavior {
  const ctx = skeletonContext(episodes, candidates, options);
  const buildFrom = (t: Trie, scope: Map<string, string>) =>
    buildAction(ctx, t, scope);
  const top = ctx.keptChildren(ctx.root);
  const rootId = "root";
  const children = top.length === 1
    ? buildFrom(top[0], new Map())
    : top.length > 1
    ? buildBranch(ctx, {
      trie: { ...ctx.root, tool: "start" },
      at: ctx.root.path,
      children: top,
      scope: new Map(),
      buildFrom,
    })
    : [];
  ctx.nodes[rootId] = { id: rootId, kind: "sequence", children };
  ctx.provenanceOf(
    rootId,
    [],
    ctx.root.members,
    "the whole behavior",
    "structural",
  );
  const ir: BehaviorIr = {
    schema_version: IR_VERSION,
    name: options.name ?? "behavior",
    root: rootId,
    nodes: Object.fromEntries(
      Object.entries(ctx.nodes).sort(([a], [b]) => a < b ? -1 : 1),
    ),
    stores: ctx.stores,
    variables: ctx.variables,
    inputs: ["input.text"],
  };
  const kinds: Record<string, number> = {};
  for (const n of Object.values(ctx.nodes)) {
    kinds[`nodes_${n.kind}`] = (kinds[`nodes_${n.kind}`] ?? 0) + 1;
  }
  ctx.provenance.sort((a, b) => a.node_id < b.node_id ? -1 : 1);
  return {
    ir,
    signatures: Object.fromEntries(
      Object.entries(ctx.signatures).sort(([a], [b]) => a < b ? -1 : 1),
    ),
    provenance: ctx.provenance,
    stats: {
      episodes: episodes.length,
      successful_episodes: ctx.successful.length,
      unexplained_episodes: ctx.unexplained,
      residual_leaves: Object.keys(ctx.signatures).length,
      ...kinds,
    },
    required_capabilities: [
      ...new Set(
        Object.values(ctx.nodes).filter((n) => n.kind === "action").map((n) =>
          (n as { tool: string }).tool
        ),
      ),
    ].sort(),
  };
}
