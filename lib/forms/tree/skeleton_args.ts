/**
 * The arguments of one skeleton action: each argument path becomes a ref
 * (a shared, uncontested source), a template, a symbolic-index ref after a
 * predicted list index, a constant (E2 or E3 only), the members' templates
 * merged with holes a residual leaf fills (`skeleton_template.ts`), or a
 * value a residual leaf predicts. Deferring beats guessing: a literal list
 * index into a list that ever held two items, or a list argument whose
 * length varies, is a model choice.
 *
 * @module
 */
import { canonicalJson } from "../../trace/canonical_json.ts";
import { argumentLeaves } from "../../lineage/normalize.ts";
import { factKey, renameStores } from "./facts.ts";
import { evalArg } from "./expressions.ts";
import type { Candidate } from "../../package/candidate.ts";
import type { ArgExpr } from "./tree_nodes.ts";
import type { DecisionDetail } from "./residualize.ts";
import { mergedTemplate } from "./skeleton_template.ts";
import { jsonType, safe, type SkeletonContext, type Trie } from "./skeleton.ts";

/** What the episodes at one trie node passed for one argument path. */
interface ArgSeen {
  /** The argument path (`item_ids[0]`, or a whole variable-length list). */
  path: string;
  /** Per member: the value and its lineage with stores renamed (or null). */
  seen: {
    m: Trie["members"][number];
    value: unknown;
    renamed: string | null;
  }[];
  /** Whether every member's value has a lineage. */
  allRenamed: boolean;
  /** The dataflow candidate of this position and path. */
  dataflow: Candidate | undefined;
  /** The constant candidate of this position and path. */
  constant: Candidate | undefined;
}

/** The arguments the model decides at one action (one leaf for all). */
interface ValueArgs {
  outputs: DecisionDetail["outputs"];
  paths: string[];
  /** Output name → the argument path it feeds. */
  args: Record<string, string>;
  /** Output name → the template it is a part of (holes). */
  within: Record<string, string>;
  candidates: Candidate[];
}

/**
 * Every argument path seen at a trie node, sorted; a list argument whose
 * length varies is one path (one value), not fixed elements.
 */
function argumentPaths(
  ctx: SkeletonContext,
  t: Trie,
): { paths: string[]; variableLists: Set<string> } {
  const argPaths = new Set<string>();
  const leafSets = new Map<string, Set<string>>();
  for (const m of t.members) {
    const paths = argumentLeaves(ctx.cores[m.ep][m.idx].step.arguments).map((
      l,
    ) => l.path);
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
  return { paths: [...argPaths].sort(), variableLists };
}

/** What the members passed for `path`, and the candidates about it. */
function argSeen(
  ctx: SkeletonContext,
  t: Trie,
  path: string,
  wholeList: boolean,
): ArgSeen {
  const seen = t.members.map((m) => {
    const s = ctx.cores[m.ep][m.idx].step;
    const leaf = wholeList
      ? { value: s.arguments[path] }
      : argumentLeaves(s.arguments).find((l) => l.path === path);
    const src = wholeList ? null : s.arg_lineage[path] ?? null;
    return {
      m,
      value: leaf?.value,
      renamed: src === null
        ? null
        : renameStores(src, (x) => ctx.storeMaps[m.ep].get(x)),
    };
  });
  return {
    path,
    seen,
    allRenamed: seen.every((x) => x.renamed !== null),
    dataflow: ctx.byKey.get(factKey(["dataflow", t.path, path])),
    constant: ctx.byKey.get(factKey(["constant", t.path, path])),
  };
}

/** A literal list index is a choice unless the list never had a second item. */
function literalIndexSafe(
  ctx: SkeletonContext,
  t: Trie,
  src: string,
): boolean {
  for (const m of src.matchAll(/^(.*?)\[(\d+)\]/g)) {
    const container = m[1].replace(/^\$ref\(/, "");
    if (
      t.members.some((x) => {
        const list = (() => {
          try {
            return evalArg({ ref: container }, ctx.boardOf(x));
          } catch {
            return null;
          }
        })();
        return Array.isArray(list) && list.length > 1;
      })
    ) return false;
  }
  return true;
}

/**
 * A ref (or template) when the members share one source with evidence
 * (E1 or better, uncontested): a package that guesses is worse than one
 * that defers. Null otherwise.
 */
function sharedRef(
  ctx: SkeletonContext,
  t: Trie,
  a: ArgSeen,
  used: Candidate[],
): ArgExpr | null {
  const { seen, dataflow } = a;
  const sources = new Set(
    seen.filter((x) => x.renamed !== null).map((x) => x.renamed),
  );
  // A value with no lineage (a small number, say) still agrees when the
  // shared ref resolves to it in that episode.
  const agreeing = sources.size === 1 &&
    seen.every((x) =>
      x.renamed !== null ||
      ctx.sameAt(ctx.boardOf(x.m), [...sources][0]!, x.value)
    );
  const flowOk = !dataflow ||
    (dataflow.status !== "contested" && dataflow.grade !== "E0") ||
    (a.allRenamed && dataflow.status !== "contested");
  if (
    !agreeing || !flowOk || t.members.length < 2 ||
    !literalIndexSafe(ctx, t, [...sources][0]!)
  ) return null;
  const src = [...sources][0]!;
  if (dataflow) used.push(dataflow);
  return src.includes("$ref(") ? { template: src } : { ref: src };
}

/**
 * The same field of a list item chosen per episode: a residual leaf
 * predicts the index, then a deterministic ref reads the item. Null when
 * the members' sources differ otherwise.
 */
function indexedRef(
  ctx: SkeletonContext,
  t: Trie,
  nodeId: string,
  a: ArgSeen,
  ids: string[],
): ArgExpr | null {
  const { seen, dataflow } = a;
  const wild = new Set(
    seen.map((x) => x.renamed?.replace(/\[\d+\]/g, "[*]") ?? null),
  );
  const stars = seen[0].renamed?.match(/\[\d+\]/g)?.length ?? 0;
  if (
    !a.allRenamed || wild.size !== 1 || stars !== 1 ||
    seen[0].renamed!.includes("$ref(")
  ) return null;
  const pattern = [...wild][0]!;
  const listPath = pattern.slice(0, pattern.indexOf("[*]"));
  const variable = `sel_${nodeId}`;
  const leafId = ctx.addSignature(
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
      decides: { kind: "index", node: nodeId, arg: a.path },
    },
    t.members,
    dataflow ? [dataflow] : [],
    `which item of ${listPath} is meant varies per episode (${
      new Set(seen.map((x) => x.renamed)).size
    } different indices): a model choice, then a deterministic ref`,
  );
  ids.push(leafId);
  return { ref: pattern.replace("[*]", `[$${variable}]`) };
}

/**
 * A constant when every member passed the same value and the constant is
 * E2 or E3 (many episodes, none against): more than frequency. Null
 * otherwise.
 */
function constantArg(a: ArgSeen, used: Candidate[]): ArgExpr | null {
  const { seen, constant } = a;
  const values = new Set(seen.map((x) => canonicalJson(x.value ?? null)));
  if (
    values.size !== 1 || !constant || constant.status === "contested" ||
    (constant.grade !== "E2" && constant.grade !== "E3")
  ) return null;
  used.push(constant);
  return { const: seen[0].value ?? null };
}

/** Genuine judgment: the model gives the value (one leaf per action). */
function modelValue(
  t: Trie,
  nodeId: string,
  a: ArgSeen,
  values: ValueArgs,
): ArgExpr {
  const variable = `val_${nodeId}_${safe(a.path)}`;
  const types = [...new Set(a.seen.map((x) => jsonType(x.value)))];
  values.outputs[safe(a.path)] = {
    variable,
    field: {
      type: types.length === 1 ? types[0] : "string",
      description: `${t.tool} argument ${a.path}`,
    },
  };
  values.paths.push(a.path);
  values.args[safe(a.path)] = a.path;
  for (const c of [a.dataflow, a.constant]) if (c) values.candidates.push(c);
  return { ref: variable };
}

/**
 * The members' templates merged (`mergedTemplate`): refs where they agree
 * or one source gives the differing words, holes the model fills where
 * nothing does. Null when they do not merge.
 */
function holedTemplate(
  ctx: SkeletonContext,
  t: Trie,
  nodeId: string,
  a: ArgSeen,
  values: ValueArgs,
): ArgExpr | null {
  const merged = mergedTemplate(ctx, { trie: t, nodeId, seen: a });
  if (!merged) return null;
  for (const h of merged.holes) {
    values.outputs[h.output] = { variable: h.variable, field: h.field };
    values.args[h.output] = a.path;
    values.within[h.output] = merged.template;
  }
  if (merged.holes.length) {
    values.paths.push(a.path);
    if (a.dataflow) values.candidates.push(a.dataflow);
  }
  return { template: merged.template };
}

/** The residual leaf that decides every model-given argument of an action. */
function valueLeaf(
  ctx: SkeletonContext,
  t: Trie,
  nodeId: string,
  scope: Map<string, string>,
  values: ValueArgs,
): string {
  const inputs: Record<string, string> = { request: "input.text" };
  for (const [k, v] of scope) inputs[k] = v;
  const named = values.paths.map((a) => `${t.tool}.${a}`).join(", ");
  return ctx.addSignature(
    `${nodeId}_args`,
    {
      inputs,
      outputs: values.outputs,
      purpose: `decide ${named}`,
      decides: {
        kind: "value",
        node: nodeId,
        arg: values.paths[0],
        args: values.args,
        ...(Object.keys(values.within).length ? { within: values.within } : {}),
      },
    },
    t.members,
    values.candidates,
    Object.keys(values.within).length
      ? `a part of ${named} differs between the episodes and no earlier result gives it (the rest is bound to earlier results)`
      : `${named} ${
        values.paths.length > 1 ? "have" : "has"
      } no source or constant shared by the episodes`,
  );
}

/** Where {@linkcode compileArgs} compiles an action's arguments. */
export interface ArgsSite {
  /** The trie node. */
  trie: Trie;
  /** The action's node id. */
  nodeId: string;
  /** Stores visible here. */
  scope: Map<string, string>;
  /** Candidates the action rests on (appended to). */
  used: Candidate[];
  /** Node ids of the sequence so far (residual leaves appended). */
  ids: string[];
}

/**
 * Compile the arguments of the action at trie node `t`: per argument path,
 * in order, a shared ref, an indexed ref, a constant, the members'
 * templates merged (holes for the model), else a model value.
 *
 * @param ctx The staticizer's state.
 * @param where The trie node, its node id, the scope, the candidates used, the sequence's node ids.
 * @returns The argument expressions.
 */
export function compileArgs(
  ctx: SkeletonContext,
  where: ArgsSite,
): Record<string, ArgExpr> {
  const { trie: t, nodeId, scope, used, ids } = where;
  const args: Record<string, ArgExpr> = {};
  const values: ValueArgs = {
    outputs: {},
    paths: [],
    args: {},
    within: {},
    candidates: [],
  };
  const { paths, variableLists } = argumentPaths(ctx, t);
  for (const path of paths) {
    const a = argSeen(ctx, t, path, variableLists.has(path));
    args[path] = sharedRef(ctx, t, a, used) ??
      indexedRef(ctx, t, nodeId, a, ids) ??
      constantArg(a, used) ??
      holedTemplate(ctx, t, nodeId, a, values) ??
      modelValue(t, nodeId, a, values);
  }
  if (values.paths.length) {
    ids.push(valueLeaf(ctx, t, nodeId, scope, values));
  }
  return args;
}
