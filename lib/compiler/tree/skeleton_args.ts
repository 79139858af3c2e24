/**
 * The arguments of one skeleton action: each argument path becomes a ref
 * (a shared, uncontested source), a template, a symbolic-index ref after a
 * predicted list index, a constant (E2 or E3 only), or a value a residual
 * leaf predicts. Deferring beats guessing: a literal list index into a list
 * that ever held two items, or a list argument whose length varies, is a
 * model choice.
 *
 * @module
 */
import { canonicalJson } from "../../trace/canonical_json.ts";
import { argumentLeaves } from "../../lineage/normalize.ts";
import { factKey, renameStores } from "./facts.ts";
import { evalArg } from "./evaluate.ts";
import type { Candidate } from "../core/candidate.ts";
import type { ArgExpr } from "../core/ir.ts";
import type { DecisionDetail } from "./residualize.ts";
import { jsonType, safe, type SkeletonContext, type Trie } from "./skeleton.ts";

/**
 * Compile the arguments of the action at trie node `t`.
 *
 * @param ctx The staticizer's state.
 * @param t The trie node.
 * @param nodeId The action's node id.
 * @param scope Stores visible here.
 * @param used Candidates the action rests on (appended to).
 * @param ids Node ids of the sequence so far (residual leaves appended).
 * @returns The argument expressions.
 */
export function compileArgs(
  ctx: SkeletonContext,
  t: Trie,
  nodeId: string,
  scope: Map<string, string>,
  used: Candidate[],
  ids: string[],
): Record<string, ArgExpr> {
  const at = t.path;
  const args: Record<string, ArgExpr> = {};
  const valueOutputs: DecisionDetail["outputs"] = {};
  const valueArgs: string[] = [];
  const valueCandidates: Candidate[] = [];
  // Every argument path seen at this node.
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
      const s = ctx.cores[m.ep][m.idx].step;
      const leaf = variableLists.has(path)
        ? { value: s.arguments[path] }
        : argumentLeaves(s.arguments).find((l) => l.path === path);
      const src = variableLists.has(path) ? null : s.arg_lineage[path] ?? null;
      return {
        m,
        value: leaf?.value,
        renamed: src === null
          ? null
          : renameStores(src, (x) => ctx.storeMaps[m.ep].get(x)),
      };
    });
    const dataflow = ctx.byKey.get(factKey(["dataflow", at, path]));
    const constant = ctx.byKey.get(factKey(["constant", at, path]));
    const allRenamed = seen.every((x) => x.renamed !== null);
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
    const leafId = ctx.addSignature(
      `${nodeId}_args`,
      {
        inputs,
        outputs: valueOutputs,
        purpose: `decide ${valueArgs.map((a) => `${t.tool}.${a}`).join(", ")}`,
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
  return args;
}
