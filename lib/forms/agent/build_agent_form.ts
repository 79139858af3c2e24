/**
 * The agent form of a compiled behavior, for conversations where one
 * exact-sequence skeleton fragments (agents vary how many lookups they
 * make and in which order): an `agent` root, one `lookup` node per
 * read-only tool whose every argument binds deterministically (called as
 * soon as the arguments bind, over every candidate up to the fan-out cap),
 * and one `choice` leaf for state-changing calls, each argument restricted
 * to the candidate set its binding gives.
 *
 * Lookup nodes are kept only where training replay shows they pay: most
 * useful first, a node is kept when at least `minYield` of its calls (and
 * at least 2) were calls the agent made too between the same writes, and
 * the kept nodes together cost at most `extraLookupBudget` extra lookups
 * per training episode. Everything is measured on training episodes only.
 *
 * @module
 */
import type { NormEpisode } from "../../lineage/records.ts";
import type { Candidate } from "../../package/candidate.ts";
import type { Effects } from "../../package/tool_effects.ts";
import { learnBindings } from "./bindings.ts";
import type { Binding } from "./binding_types.ts";
import type {
  BehaviorIr,
  CompiledBehavior,
  NodeProvenance,
} from "../../package/ir.ts";
import { IR_VERSION } from "../../package/ir.ts";
import type {
  AgentFormNode,
  BoundArg,
  ChoiceTool,
  LookupNode,
} from "./agent_nodes.ts";
import { agentNodes } from "./agent_nodes.ts";
import { canonicalJson } from "../../trace/canonical_json.ts";
import { type AgentReplay, replayAgent } from "./agent_replay.ts";
import { DEFAULT_FANOUT } from "./agent_engine.ts";
import { describeSource } from "../../package/source.ts";
import { type CompileMemo, selectLookups } from "./lookup_selection.ts";
import { afterLast } from "./lookup_variants.ts";
import { bindingCandidates, gradeOf } from "./agent_verify.ts";
import {
  CHOICE_SIGNATURE,
  choiceSignatures,
  choiceTools,
  unseenTools,
} from "./choice_leaf.ts";

/**
 * The agent form's tuning parameters (swept by `bench/tune.ts` on
 * validation parts of the training split only).
 */
export interface AgentTuning {
  /** Fan-out cap per lookup node. @default 5 */
  fanout?: number;
  /** Least share of a lookup node's calls the agent must have made. @default 0.25 */
  minYield?: number;
  /** Most extra lookups per training episode the kept nodes may cost. @default 3 */
  extraLookupBudget?: number;
  /** Adjacency share of paired user words (`learnBindings`). @default 0.8 */
  adjacentShare?: number;
  /** Coverage a contested binding needs to drive a lookup (`learnBindings`). @default 0.9 */
  speculativeCoverage?: number;
}

/** Options of {@linkcode buildAgentForm}. */
export interface AgentFormOptions extends AgentTuning {
  /** Behavior name. */
  name?: string;
  /** Tool effects (`read` tools may be looked up; others go to the choice leaf). */
  effects: Effects;
  /**
   * Keep no lookup node, each dropped with this reason (set when the
   * validation part of training showed the lookups save nothing).
   */
  dropLookups?: string;
  /** What the compile already worked out (its builds share it). */
  memo?: CompileMemo;
}

/** The agent form and what it was built from. */
export interface AgentForm {
  /** The compiled behavior. */
  compiled: CompiledBehavior;
  /** The bindings learned. */
  bindings: Binding[];
  /** Bindings as package candidates. */
  candidates: Candidate[];
  /** Lookup nodes left out, with why. */
  dropped: { node: string; why: string }[];
  /** Training replay of the final form. */
  replays: AgentReplay[];
}

function safe(name: string): string {
  return name.replace(/[^A-Za-z0-9_]/g, "_");
}

function lookupNodes(bindings: Binding[], effects: Effects): AgentFormNode[] {
  const byTool = new Map<string, Binding[]>();
  for (const b of bindings) {
    byTool.set(b.tool, [...(byTool.get(b.tool) ?? []), b]);
  }
  const out: AgentFormNode[] = [];
  for (const [tool, bs] of [...byTool].sort(([a], [b]) => a < b ? -1 : 1)) {
    if (effects[tool] !== "read") continue;
    const flat = bs.every((b) => /^[A-Za-z0-9_]+$/.test(b.path));
    const sameShape = bs.every((b) => b.applicable === bs[0].applicable);
    if (!flat || !sameShape || !bs.every((b) => b.lookup.speculative)) {
      continue;
    }
    const args: BoundArg[] = bs.map((b) => ({
      path: b.path,
      sources: b.lookup.sources,
    }));
    afterLast(args);
    out.push({ id: `lookup_${safe(tool)}`, kind: "lookup", tool, args });
  }
  return out;
}

function assemble(
  name: string,
  lookups: AgentFormNode[],
  tools: ChoiceTool[],
  fanout: number,
  unseen: { tool: string; effect: string }[],
): BehaviorIr {
  const nodes: Record<string, AgentFormNode> = {};
  for (const n of lookups) nodes[n.id] = n;
  const choice = tools.length ? "choice" : null;
  if (choice) {
    nodes[choice] = {
      id: choice,
      kind: "choice",
      signature: CHOICE_SIGNATURE,
      tools,
      ...(unseen.length ? { unseen_tools: unseen } : {}),
    };
  }
  nodes.agent = {
    id: "agent",
    kind: "agent",
    lookups: lookups.map((n) => n.id),
    choice,
    fanout,
  };
  return {
    schema_version: IR_VERSION,
    name,
    root: "agent",
    nodes,
    stores: [],
    variables: [],
    inputs: ["input.user"],
  };
}

/** Why each node of the agent form exists: the bindings behind it. */
function agentProvenance(
  ir: BehaviorIr,
  bindings: Binding[],
  episodes: number,
): NodeProvenance[] {
  const byTool = new Map<string, Binding[]>();
  for (const b of bindings) {
    byTool.set(b.tool, [...(byTool.get(b.tool) ?? []), b]);
  }
  const provenance: NodeProvenance[] = [];
  for (const n of Object.values(agentNodes(ir))) {
    const bs = n.kind === "lookup"
      ? byTool.get(n.tool) ?? []
      : n.kind === "choice"
      ? n.tools.flatMap((t) => byTool.get(t.tool) ?? [])
      : [];
    const grades = bs.map(gradeOf).sort();
    provenance.push({
      node_id: n.id,
      candidate_ids: bs.map((b) => `c_binding_${safe(b.tool)}_${safe(b.path)}`),
      grade: n.kind === "choice"
        ? "residual"
        : n.kind === "agent"
        ? "structural"
        : grades[0] ?? "E0",
      support: Math.min(...bs.map((b) => b.applicable), episodes),
      applicable: episodes,
      counterexamples: 0,
      episodes: [...new Set(bs.flatMap((b) => b.episodes))].sort().slice(
        0,
        10,
      ),
      why: n.kind === "lookup"
        ? `every argument of ${n.tool} binds in training: ${
          n.args.map((a) =>
            `${a.path} from ${a.sources!.map(describeSource).join(" or ")}`
          ).join("; ")
        }`
        : n.kind === "choice"
        ? `state-changing calls are one model choice, each argument restricted to its candidates (${
          n.tools.map((t) => t.tool).join(", ")
        })${
          n.unseen_tools?.length
            ? `; never made in training, checked by argument name: ${
              n.unseen_tools.map((t) => t.tool).join(", ")
            }`
            : ""
        }`
        : "conversation root: lookups as soon as arguments bind, a choice leaf for writes",
    });
  }
  provenance.sort((a, b) => a.node_id < b.node_id ? -1 : 1);
  return provenance;
}

/** Most a learned per-node fan-out cap may be. */
const MAX_LEARNED_FANOUT = 20;

/**
 * Give a lookup node its own fan-out cap where training shows the agent
 * calling its tool with more distinct arguments in one conversation than
 * the root's cap (a customer's reservations read one by one): the most it
 * did in any training episode, at most {@linkcode MAX_LEARNED_FANOUT}.
 */
function withLearnedCaps(
  nodes: AgentFormNode[],
  episodes: NormEpisode[],
  fanout: number,
): AgentFormNode[] {
  return nodes.map((n) => {
    if (n.kind !== "lookup") return n;
    let most = 0;
    for (const ep of episodes) {
      const seen = new Set<string>();
      for (const s of ep.steps) {
        if (s.ok && s.logical_tool === n.tool) {
          seen.add(canonicalJson(s.arguments));
        }
      }
      most = Math.max(most, seen.size);
    }
    const cap = Math.min(most, MAX_LEARNED_FANOUT);
    return cap > fanout ? { ...n, fanout: cap } : n;
  });
}

/**
 * Build the agent form from training episodes.
 *
 * @param episodes Normalized training episodes.
 * @param options Effects, name and the tuning parameters.
 * @returns The form, its bindings, what was dropped, the training replay.
 */
export function buildAgentForm(
  episodes: NormEpisode[],
  options: AgentFormOptions,
): AgentForm {
  const name = options.name ?? "behavior";
  const fanout = options.fanout ?? DEFAULT_FANOUT;
  const minYield = options.minYield ?? 0.25;
  const budget = options.extraLookupBudget ?? 3;
  const effects = options.effects;
  const bindings = learnBindings(episodes, {
    effects,
    adjacentShare: options.adjacentShare,
    speculativeCoverage: options.speculativeCoverage,
    words: options.memo?.words,
    leaves: options.memo?.leaves,
  });
  let lookups = withLearnedCaps(
    lookupNodes(bindings, effects),
    episodes,
    fanout,
  );
  const { tools, refused, freed } = choiceTools(bindings, effects);
  const unseen = unseenTools(effects, { tools, refused });
  const dropped: { node: string; why: string }[] = [
    ...refused.map((r) => ({ node: `choice:${r.tool}`, why: r.why })),
    ...freed.map((r) => ({ node: `choice:${r.tool}`, why: r.why })),
  ];
  const selection = selectLookups(episodes, {
    lookups,
    irOf: (nodes) => assemble(name, nodes, tools, fanout, unseen),
    effects,
    minYield,
    budget,
    memo: options.memo,
    bindings,
  });
  dropped.push(...selection.dropped);
  lookups = selection.kept;
  if (options.dropLookups) {
    const why = options.dropLookups;
    dropped.push(...lookups.map((n) => ({ node: n.id, why })));
    lookups = [];
  }
  const ir = assemble(name, lookups, tools, fanout, unseen);
  const replays = episodes.map((ep) =>
    replayAgent(ir, {
      episode: ep,
      effects,
      words: options.memo?.words,
      leaves: options.memo?.leaves,
    })
  );
  const provenance = agentProvenance(ir, bindings, episodes.length);
  const signatures = choiceSignatures(tools, unseen);
  const required = [
    ...new Set([
      ...lookups.map((n) => (n as LookupNode).tool),
      ...tools.map((t) => t.tool),
    ]),
  ].sort();
  return {
    compiled: {
      ir,
      signatures,
      provenance,
      stats: {
        episodes: episodes.length,
        bindings: bindings.length,
        lookup_nodes: lookups.length,
        choice_tools: tools.length,
        dropped: dropped.length,
      },
      required_capabilities: required,
    },
    bindings,
    candidates: bindingCandidates(bindings),
    dropped,
    replays,
  };
}
