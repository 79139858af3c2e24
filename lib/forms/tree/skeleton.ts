/**
 * The shared state of staticization: the prefix tree of the successful
 * episodes' core tool sequences, the nodes, signatures, provenance, stores
 * and variables built so far, and the helpers every builder uses
 * (provenance, the skeleton blackboard of a member episode, residual leaves).
 *
 * @module
 */
import { canonicalJson } from "../../trace/canonical_json.ts";
import type { NormEpisode } from "../../lineage/records.ts";
import { type CoreStep, coreSteps } from "../core_steps.ts";
import type { Effects } from "../../package/tool_effects.ts";
import { coreNames, factKey } from "./facts.ts";
import { evalArg } from "./expressions.ts";
import type { Candidate } from "../../package/candidate.ts";
import type { NodeProvenance, Signature } from "../../package/ir.ts";
import type { TreeNode } from "./tree_nodes.ts";
import {
  type CompilerModel,
  type DecisionDetail,
  residualizeDecision,
} from "./residualize.ts";

/** An episode's step at a trie node. */
export interface Member {
  /** Episode (index among the successful ones). */
  ep: number;
  /** Core step index. */
  idx: number;
}

/** A node of the prefix tree of core tool sequences. */
export interface Trie {
  /** Tool. */
  tool: string;
  /** Core tools from the start to here, joined by ">". */
  path: string;
  /** Episodes through here. */
  members: Member[];
  /** Next tools. */
  children: Map<string, Trie>;
}

/** Grades from weakest to strongest. */
export const GRADE_ORDER = ["E0", "E1", "E2", "E3", "E4"];

/** The weakest of some grades (E0 for none). */
export function weakest(grades: string[]): string {
  if (grades.length === 0) return "E0";
  return grades.reduce((a, b) =>
    GRADE_ORDER.indexOf(a) <= GRADE_ORDER.indexOf(b) ? a : b
  );
}

/** JSON type name of a value. */
export function jsonType(v: unknown): string {
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  if (Array.isArray(v)) return "array";
  if (v === null) return "null";
  return typeof v;
}

/** A name with non-identifier characters as `_`. */
export function safe(s: string): string {
  return s.replace(/[^A-Za-z0-9_]/g, "_");
}

/** What the staticizer's builders share. */
export interface SkeletonContext {
  /** Tool effects. */
  effects: Effects;
  /** The compiler model, for residual wording. */
  model: CompilerModel | null | undefined;
  /** Candidates. */
  candidates: Candidate[];
  /** Candidates by fact key. */
  byKey: Map<string, Candidate>;
  /** Successful episodes. */
  successful: NormEpisode[];
  /** Their core steps. */
  cores: CoreStep[][];
  /** Their core step names. */
  names: string[][];
  /** Per episode: its store → the skeleton's store. */
  storeMaps: Map<string, string>[];
  /** Nodes built. */
  nodes: Record<string, TreeNode>;
  /** Signatures built. */
  signatures: Record<string, Signature>;
  /** Provenance built. */
  provenance: NodeProvenance[];
  /** Stores in order. */
  stores: string[];
  /** Variables. */
  variables: string[];
  /** Actions built so far (numbers node ids). */
  actions: number;
  /** Episodes dropped with rare children. */
  unexplained: number;
  /** The prefix tree. */
  root: Trie;
  /** Record provenance of a node. */
  provenanceOf(
    nodeId: string,
    used: Candidate[],
    members: Member[],
    why: string,
    grade?: string,
  ): void;
  /** The skeleton blackboard of a member episode before its step. */
  boardOf(m: Member): Record<string, unknown>;
  /** Whether a source resolves to the value on a board. */
  sameAt(
    board: Record<string, unknown>,
    source: string,
    value: unknown,
  ): boolean;
  /** Children with enough members (the rest count as unexplained). */
  keptChildren(t: Trie): Trie[];
  /** Add a residual leaf; returns its node id. */
  addSignature(
    nodeId: string,
    detail: DecisionDetail,
    members: Member[],
    candidatesUsed: Candidate[],
    why: string,
  ): string;
}

function buildTrie(cores: CoreStep[][]): Trie {
  const root: Trie = {
    tool: "",
    path: "start",
    members: [],
    children: new Map(),
  };
  cores.forEach((core, ep) => {
    let t = root;
    root.members.push({ ep, idx: -1 });
    core.forEach((c, idx) => {
      let child = t.children.get(c.step.logical_tool);
      if (!child) {
        child = {
          tool: c.step.logical_tool,
          path: t === root
            ? c.step.logical_tool
            : `${t.path}>${c.step.logical_tool}`,
          members: [],
          children: new Map(),
        };
        t.children.set(c.step.logical_tool, child);
      }
      child.members.push({ ep, idx });
      t = child;
    });
  });
  return root;
}

// One context whose methods close over its state.
/**
 * Set up staticization.
 *
 * @param episodes Normalized episodes (the successful ones shape the skeleton).
 * @param candidates Consolidated candidates.
 * @param options Effects and compiler model.
 * @returns The context.
 */
export function skeletonContext(
  episodes: NormEpisode[],
  candidates: Candidate[],
  options: { effects?: Effects; model?: CompilerModel | null } = {},
): SkeletonContext {
  const effects = options.effects ?? {};
  const successful = episodes.filter((e) => e.success === true);
  const cores: CoreStep[][] = successful.map((e) => coreSteps(e, effects));
  const names: string[][] = cores.map((c) => coreNames(c).names);
  const storeMaps: Map<string, string>[] = cores.map(() => new Map());
  const nodes: Record<string, TreeNode> = {};
  const signatures: Record<string, Signature> = {};
  const provenance: NodeProvenance[] = [];
  const variables: string[] = [];
  const ctx = {
    effects,
    model: options.model,
    candidates,
    byKey: new Map(candidates.map((c) => [factKey(c.key), c])),
    successful,
    cores,
    names,
    storeMaps,
    nodes,
    signatures,
    provenance,
    stores: [],
    variables,
    actions: 0,
    unexplained: 0,
    root: buildTrie(cores),
  } as unknown as SkeletonContext;

  ctx.provenanceOf = (
    nodeId: string,
    used: Candidate[],
    members: Member[],
    why: string,
    grade?: string,
  ) => {
    const eps = [...new Set(members.map((m) => successful[m.ep].episode_id))]
      .sort();
    provenance.push({
      node_id: nodeId,
      candidate_ids: used.map((c) => c.candidate_id).sort(),
      grade: grade ?? weakest(used.map((c) => c.grade)),
      support: eps.length,
      applicable: Math.max(
        eps.length,
        ...used.map((c) => c.evidence.applicable),
      ),
      counterexamples: Math.max(
        0,
        ...used.map((c) => c.evidence.counterexamples),
      ),
      episodes: eps.slice(0, 10),
      why,
    });
  };

  /** The skeleton blackboard of a member episode before its step. */
  ctx.boardOf = (m: Member): Record<string, unknown> => {
    const board: Record<string, unknown> = {};
    const input = cores[m.ep][0]?.step.state_before.input;
    if (input !== undefined) board.input = input;
    for (let j = 0; j < m.idx; j++) {
      const s = cores[m.ep][j].step;
      const to = s.store ? storeMaps[m.ep].get(s.store) : undefined;
      if (to) board[to] = s.result;
    }
    return board;
  };
  ctx.sameAt = (
    board: Record<string, unknown>,
    source: string,
    value: unknown,
  ): boolean => {
    try {
      const v = evalArg(
        source.includes("$ref(") ? { template: source } : { ref: source },
        board,
      );
      return canonicalJson(v) === canonicalJson(value ?? null);
    } catch {
      return false;
    }
  };

  ctx.keptChildren = (t: Trie): Trie[] => {
    const min = Math.max(2, Math.ceil(0.02 * t.members.length));
    const kept = [...t.children.values()].filter((c) => c.members.length >= min)
      .sort((a, b) => a.tool < b.tool ? -1 : 1);
    const dropped = [...t.children.values()].filter((c) =>
      c.members.length < min
    );
    for (const d of dropped) ctx.unexplained += d.members.length;
    return kept;
  };

  ctx.addSignature = (
    nodeId: string,
    detail: DecisionDetail,
    members: Member[],
    candidatesUsed: Candidate[],
    why: string,
  ): string => {
    const { signature, leaf } = residualizeDecision({
      index: ctx.actions,
      node_id: nodeId,
      inputs: Object.keys(detail.inputs),
      outputs: Object.keys(detail.outputs),
      kind: "predict",
    }, { model: ctx.model, detail });
    signatures[signature.id] = signature;
    nodes[leaf.id] = leaf;
    for (const o of Object.values(detail.outputs)) {
      if (!variables.includes(o.variable)) variables.push(o.variable);
    }
    ctx.provenanceOf(leaf.id, candidatesUsed, members, why, "residual");
    return leaf.id;
  };

  return ctx;
}
