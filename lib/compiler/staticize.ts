/**
 * Staticization (seed 4.5 rule 6): the control skeleton comes from the
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
import { canonicalJson } from "../trace/canonical_json.ts";
import type { NormEpisode } from "../lineage/records.ts";
import {
  argumentLeaves,
  synthNodeId,
  synthStore,
} from "../lineage/normalize.ts";
import { type CoreStep, coreSteps, type Effects } from "./core_steps.ts";
import { coreNames, factKey, renameStores } from "./facts.ts";
import { evalArg } from "./evaluate.ts";
import type { Candidate } from "./consolidate.ts";
import type {
  ArgExpr,
  BehaviorIr,
  CompiledBehavior,
  IrNode,
  NodeProvenance,
  Signature,
} from "./ir.ts";
import { IR_VERSION } from "./ir.ts";
import {
  type CompilerModel,
  type DecisionDetail,
  residualizeDecision,
} from "./residualize.ts";

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

interface Member {
  ep: number;
  idx: number;
}

interface Trie {
  tool: string;
  /** Core tools from the start to here, joined by ">". */
  path: string;
  members: Member[];
  children: Map<string, Trie>;
}

const GRADE_ORDER = ["E0", "E1", "E2", "E3", "E4"];

function weakest(grades: string[]): string {
  if (grades.length === 0) return "E0";
  return grades.reduce((a, b) =>
    GRADE_ORDER.indexOf(a) <= GRADE_ORDER.indexOf(b) ? a : b
  );
}

function jsonType(v: unknown): string {
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  if (Array.isArray(v)) return "array";
  if (v === null) return "null";
  return typeof v;
}

function safe(s: string): string {
  return s.replace(/[^A-Za-z0-9_]/g, "_");
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
  const effects = options.effects ?? {};
  const byKey = new Map(candidates.map((c) => [factKey(c.key), c]));
  const successful = episodes.filter((e) => e.success === true);
  const cores: CoreStep[][] = successful.map((e) => coreSteps(e, effects));
  const names: string[][] = cores.map((c) => coreNames(c).names);
  const storeMaps: Map<string, string>[] = cores.map(() => new Map());

  // Prefix tree of core tool sequences.
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

  const nodes: Record<string, IrNode> = {};
  const signatures: Record<string, Signature> = {};
  const provenance: NodeProvenance[] = [];
  const stores: string[] = [];
  const variables: string[] = [];
  let actions = 0;
  let unexplained = 0;

  const provenanceOf = (
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
  const boardOf = (m: Member): Record<string, unknown> => {
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
  const sameAt = (
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

  const keptChildren = (t: Trie): Trie[] => {
    const min = Math.max(2, Math.ceil(0.02 * t.members.length));
    const kept = [...t.children.values()].filter((c) => c.members.length >= min)
      .sort((a, b) => a.tool < b.tool ? -1 : 1);
    const dropped = [...t.children.values()].filter((c) =>
      c.members.length < min
    );
    for (const d of dropped) unexplained += d.members.length;
    return kept;
  };

  const addSignature = (
    nodeId: string,
    detail: DecisionDetail,
    members: Member[],
    candidatesUsed: Candidate[],
    why: string,
  ): string => {
    const { signature, leaf } = residualizeDecision({
      index: actions,
      node_id: nodeId,
      inputs: Object.keys(detail.inputs),
      outputs: Object.keys(detail.outputs),
      kind: "predict",
    }, { model: options.model, detail });
    signatures[signature.id] = signature;
    nodes[leaf.id] = leaf;
    for (const o of Object.values(detail.outputs)) {
      if (!variables.includes(o.variable)) variables.push(o.variable);
    }
    provenanceOf(leaf.id, candidatesUsed, members, why, "residual");
    return leaf.id;
  };

  /** Build the action for trie node t and everything after it. */
  const buildFrom = (t: Trie, scope: Map<string, string>): string[] => {
    const at = t.path;
    const index = actions++;
    const nodeId = synthNodeId(t.tool, index);
    const store = synthStore(t.tool, index);
    const ids: string[] = [];
    const used: Candidate[] = [];
    const args: Record<string, ArgExpr> = {};
    const valueOutputs: DecisionDetail["outputs"] = {};
    const valueArgs: string[] = [];
    const valueCandidates: Candidate[] = [];
    const prevPath = at.includes(">")
      ? at.slice(0, at.lastIndexOf(">"))
      : "start";
    const fixed = byKey.get(factKey(["fixed_action", prevPath]));
    if (fixed && fixed.status !== "contested") used.push(fixed);
    // Every argument path seen at this node.
    const argPaths = new Set<string>();
    const leafSets = new Map<string, Set<string>>();
    for (const m of t.members) {
      const paths = argumentLeaves(cores[m.ep][m.idx].step.arguments).map((l) =>
        l.path
      );
      for (const p of paths) argPaths.add(p);
      // Leaves inside lists, grouped by the list argument.
      for (const p of paths) {
        const i = p.indexOf("[");
        if (i > 0) {
          const key = `${m.ep}:${p.slice(0, i)}`;
          const set = leafSets.get(key) ?? new Set<string>();
          set.add(p);
          leafSets.set(key, set);
        }
      }
    }
    // A list argument whose length varies is one value, not fixed elements.
    const variableLists = new Set<string>();
    for (
      const list of new Set(
        [...argPaths].filter((p) => p.includes("[")).map((p) =>
          p.slice(0, p.indexOf("["))
        ),
      )
    ) {
      const shapes = new Set(
        t.members.map((m) =>
          [...(leafSets.get(`${m.ep}:${list}`) ?? [])].sort().join(",")
        ),
      );
      if (shapes.size > 1) variableLists.add(list);
    }
    for (const list of variableLists) {
      for (const p of [...argPaths]) {
        if (p.startsWith(`${list}[`)) argPaths.delete(p);
      }
      argPaths.add(list);
    }
    for (const path of [...argPaths].sort()) {
      const seen = t.members.map((m) => {
        const s = cores[m.ep][m.idx].step;
        const leaf = variableLists.has(path)
          ? { value: s.arguments[path] }
          : argumentLeaves(s.arguments).find((l) => l.path === path);
        const src = variableLists.has(path)
          ? null
          : s.arg_lineage[path] ?? null;
        return {
          m,
          value: leaf?.value,
          renamed: src === null
            ? null
            : renameStores(src, (x) => storeMaps[m.ep].get(x)),
        };
      });
      const dataflow = byKey.get(factKey(["dataflow", at, path]));
      const constant = byKey.get(factKey(["constant", at, path]));
      const allRenamed = seen.every((x) => x.renamed !== null);
      const sources = new Set(
        seen.filter((x) => x.renamed !== null).map((x) => x.renamed),
      );
      // A value with no lineage (a small number, say) still agrees when the
      // shared ref resolves to it in that episode.
      const agreeing = sources.size === 1 &&
        seen.every((x) =>
          x.renamed !== null || sameAt(boardOf(x.m), [...sources][0]!, x.value)
        );
      // A shared source compiles to a ref only with evidence (E1 or better,
      // uncontested): a package that guesses is worse than one that defers.
      const flowOk = !dataflow ||
        (dataflow.status !== "contested" && dataflow.grade !== "E0") ||
        (allRenamed && dataflow.status !== "contested");
      // A literal list index is a choice unless the list never had a second item.
      const literalIndexSafe = (src: string) => {
        for (const m of src.matchAll(/^(.*?)\[(\d+)\]/g)) {
          const container = m[1].replace(/^\$ref\(/, "");
          if (
            t.members.some((x) => {
              const list = (() => {
                try {
                  return evalArg({ ref: container }, boardOf(x));
                } catch {
                  return null;
                }
              })();
              return Array.isArray(list) && list.length > 1;
            })
          ) return false;
        }
        return true;
      };
      if (
        agreeing && flowOk && t.members.length >= 2 &&
        literalIndexSafe([...sources][0]!)
      ) {
        const src = [...sources][0]!;
        args[path] = src.includes("$ref(") ? { template: src } : { ref: src };
        if (dataflow) used.push(dataflow);
        continue;
      }
      const wild = new Set(
        seen.map((x) => x.renamed?.replace(/\[\d+\]/g, "[*]") ?? null),
      );
      const stars = seen[0].renamed?.match(/\[\d+\]/g)?.length ?? 0;
      if (
        allRenamed && wild.size === 1 && stars === 1 &&
        !seen[0].renamed!.includes("$ref(")
      ) {
        // The same field of a list item chosen per episode: predict the index.
        const pattern = [...wild][0]!;
        const listPath = pattern.slice(0, pattern.indexOf("[*]"));
        const variable = `sel_${nodeId}`;
        const leafId = addSignature(
          nodeId,
          {
            inputs: { request: "input.text", options: listPath },
            outputs: {
              index: {
                variable,
                field: {
                  type: "integer",
                  minimum: 0,
                  description: `index in ${listPath}`,
                },
              },
            },
            purpose: `pick the item of ${listPath} that the request is about`,
            decides: { kind: "index", node: nodeId, arg: path },
          },
          t.members,
          dataflow ? [dataflow] : [],
          `which item of ${listPath} is meant varies per episode (${
            new Set(seen.map((x) => x.renamed)).size
          } different indices): a model choice, then a deterministic ref`,
        );
        ids.push(leafId);
        args[path] = { ref: pattern.replace("[*]", `[$${variable}]`) };
        continue;
      }
      const values = new Set(seen.map((x) => canonicalJson(x.value ?? null)));
      // A constant needs more than frequency: E2 or E3 (many episodes, none against).
      if (
        values.size === 1 && constant && constant.status !== "contested" &&
        (constant.grade === "E2" || constant.grade === "E3")
      ) {
        args[path] = { const: seen[0].value ?? null };
        if (constant) used.push(constant);
        continue;
      }
      // Genuine judgment: the model gives the value (one leaf per action).
      const variable = `val_${nodeId}_${safe(path)}`;
      const types = [...new Set(seen.map((x) => jsonType(x.value)))];
      valueOutputs[safe(path)] = {
        variable,
        field: {
          type: types.length === 1 ? types[0] : "string",
          description: `${t.tool} argument ${path}`,
        },
      };
      valueArgs.push(path);
      for (const c of [dataflow, constant]) if (c) valueCandidates.push(c);
      args[path] = { ref: variable };
    }
    if (valueArgs.length) {
      const inputs: Record<string, string> = { request: "input.text" };
      for (const [k, v] of scope) inputs[k] = v;
      const leafId = addSignature(
        `${nodeId}_args`,
        {
          inputs,
          outputs: valueOutputs,
          purpose: `decide ${
            valueArgs.map((a) => `${t.tool}.${a}`).join(", ")
          }`,
          decides: {
            kind: "value",
            node: nodeId,
            arg: valueArgs[0],
            args: Object.fromEntries(valueArgs.map((a) => [safe(a), a])),
          },
        },
        t.members,
        valueCandidates,
        `${valueArgs.map((a) => `${t.tool}.${a}`).join(", ")} ${
          valueArgs.length > 1 ? "have" : "has"
        } no source or constant shared by the episodes`,
      );
      ids.push(leafId);
    }
    // Recovery.
    const codes = new Set<string>();
    let attempts = 1;
    for (const m of t.members) {
      const c = cores[m.ep][m.idx];
      c.recovered.forEach((x) => codes.add(x));
      attempts = Math.max(attempts, c.attempts);
    }
    let recovery = null;
    const recCands = [...codes].sort().map((code) =>
      byKey.get(factKey(["recovery", t.tool, code]))
    );
    if (codes.size && recCands.every((c) => c && c.status !== "contested")) {
      for (const c of recCands) used.push(c!);
      const max = Math.max(
        attempts,
        ...recCands.map((c) => Number(c!.claim.max_attempts) || 1),
      );
      recovery = {
        retry_on: [...codes].sort(),
        max_attempts: Math.min(max, 5),
      };
    }
    nodes[nodeId] = {
      id: nodeId,
      kind: "action",
      tool: t.tool,
      args,
      store,
      effect: effects[t.tool] ?? "write",
      recovery,
    };
    ids.push(nodeId);
    stores.push(store);
    for (const m of t.members) {
      storeMaps[m.ep].set(cores[m.ep][m.idx].step.store!, store);
    }
    const nextScope = new Map(scope).set(store, store);
    provenanceOf(
      nodeId,
      used,
      t.members,
      `${t.tool} is called by ${t.members.length} successful episodes at this point`,
    );
    // What follows.
    const children = keptChildren(t);
    if (children.length === 1) ids.push(...buildFrom(children[0], nextScope));
    else if (children.length > 1) {
      ids.push(...buildBranch(t, at, children, nextScope));
    }
    return ids;
  };

  const buildBranch = (
    t: Trie,
    at: string,
    children: Trie[],
    scope: Map<string, string>,
  ): string[] => {
    const branchId = `b${actions}_${safe(t.tool)}`;
    const ids: string[] = [];
    const childName = (c: Trie) => c.tool;
    const wanted = new Set(children.map(childName));
    // Uncontested predicates at this point whose mapping reaches exactly these arms.
    const preds = candidates.filter((c) =>
      c.type === "predicate" && c.key[1] === at && c.status !== "contested" &&
      (c.claim.mapping as { next: string }[]).every((m) =>
        wanted.has(m.next)
      ) &&
      new Set((c.claim.mapping as { next: string }[]).map((m) => m.next))
          .size === wanted.size
    ).sort((a, b) =>
      GRADE_ORDER.indexOf(b.grade) - GRADE_ORDER.indexOf(a.grade) ||
      (a.claim.mapping as unknown[]).length -
        (b.claim.mapping as unknown[]).length ||
      String(a.key[2]).length - String(b.key[2]).length
    );
    const destructive = children.some((c) => effects[c.tool] === "destructive");
    const pred = preds.find((p) => !destructive || p.grade === "E3");
    const arms = children.map((c) => {
      const seqId = `s_${branchId}_${safe(c.tool)}`;
      nodes[seqId] = {
        id: seqId,
        kind: "sequence",
        children: buildFrom(c, new Map(scope)),
      };
      provenanceOf(
        seqId,
        [],
        c.members,
        `arm taken by ${c.members.length} episodes`,
        "structural",
      );
      return {
        name: childName(c),
        tool: c.tool,
        id: seqId,
        members: c.members,
      };
    });
    const stopId = `x_${branchId}`;
    nodes[stopId] = {
      id: stopId,
      kind: "stop",
      reason: `no verified case at ${branchId}: stop rather than guess`,
    };
    provenanceOf(stopId, [], t.members, "fallback of a branch", "structural");
    let on: string;
    let cases: { equals: unknown; then: string }[];
    if (pred) {
      // Field `<tool>#<k>.a.b` → the skeleton store of that step on this path.
      const field = String(pred.key[2]);
      const [stepName, ...rest] = field.split(".");
      const m = t.members[0];
      const idx = names[m.ep].indexOf(stepName);
      const skStore = storeMaps[m.ep].get(cores[m.ep][idx].step.store!)!;
      on = [skStore, ...rest].join(".");
      cases = (pred.claim.mapping as { value: unknown; next: string }[]).map((
        x,
      ) => ({
        equals: x.value,
        then: arms.find((a) => a.name === x.next)!.id,
      }));
      provenanceOf(
        branchId,
        [pred],
        t.members,
        `${field} decides between ${[...wanted].join(" and ")}`,
      );
    } else {
      const variable = `arm_${branchId}`;
      const leafId = addSignature(
        branchId,
        {
          inputs: Object.fromEntries([["request", "input.text"], ...scope]),
          outputs: {
            action: {
              variable,
              field: { type: "string", enum: arms.map((a) => a.tool) },
            },
          },
          purpose: `choose the next action: ${
            arms.map((a) => a.tool).join(" or ")
          }`,
          decides: { kind: "arm", node: branchId },
        },
        t.members,
        preds,
        preds.length
          ? `a predicate explains the fork but is ${
            preds[0].grade
          }: an arm with a destructive tool needs E3`
          : "no uncontested predicate explains the fork",
      );
      ids.push(leafId);
      on = variable;
      cases = arms.map((a) => ({ equals: a.tool, then: a.id }));
    }
    nodes[branchId] = {
      id: branchId,
      kind: "branch",
      on,
      cases,
      otherwise: stopId,
    };
    ids.push(branchId);
    return ids;
  };

  const top = keptChildren(root);
  const rootId = "root";
  const children = top.length === 1
    ? buildFrom(top[0], new Map())
    : top.length > 1
    ? buildBranch({ ...root, tool: "start" }, root.path, top, new Map())
    : [];
  nodes[rootId] = { id: rootId, kind: "sequence", children };
  provenanceOf(rootId, [], root.members, "the whole behavior", "structural");
  const ir: BehaviorIr = {
    schema_version: IR_VERSION,
    name: options.name ?? "behavior",
    root: rootId,
    nodes: Object.fromEntries(
      Object.entries(nodes).sort(([a], [b]) => a < b ? -1 : 1),
    ),
    stores,
    variables,
    inputs: ["input.text"],
  };
  const kinds: Record<string, number> = {};
  for (const n of Object.values(nodes)) {
    kinds[`nodes_${n.kind}`] = (kinds[`nodes_${n.kind}`] ?? 0) + 1;
  }
  provenance.sort((a, b) => a.node_id < b.node_id ? -1 : 1);
  return {
    ir,
    signatures: Object.fromEntries(
      Object.entries(signatures).sort(([a], [b]) => a < b ? -1 : 1),
    ),
    provenance,
    stats: {
      episodes: episodes.length,
      successful_episodes: successful.length,
      unexplained_episodes: unexplained,
      residual_leaves: Object.keys(signatures).length,
      ...kinds,
    },
    required_capabilities: [
      ...new Set(
        Object.values(nodes).filter((n) => n.kind === "action").map((n) =>
          (n as { tool: string }).tool
        ),
      ),
    ].sort(),
  };
}
