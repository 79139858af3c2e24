/**
 * Narrowed variants of lookup nodes: result sources that keep only the
 * leaves whose name (a sibling field, or the leaf's own key) the user
 * mentioned — the product of the item the user talks about, not of every
 * item of every order.
 *
 * @module
 */
import type { SourceMemo } from "./sources.ts";
import type { NormEpisode } from "../../lineage/records.ts";
import type { LookupNode } from "./agent_nodes.ts";
import { statesOf } from "./bindings.ts";
import type { Binding } from "./binding_types.ts";
import { isRecordSource, type RecordSource } from "./sources.ts";
import { generalLeaves, whereText } from "./call_leaves.ts";
import { isMentioned, mentionStems } from "./mentions.ts";

/**
 * The variant of a lookup whose result sources keep only leaves the user
 * mentioned: per argument, the sibling field (or the leaf's own key) that
 * most often named something the user had said when the agent made the
 * call in training (at least twice). Null when no argument has one.
 */
export function mentionedVariant(
  node: LookupNode,
  episodes: NormEpisode[],
  memo?: SourceMemo,
): LookupNode | null {
  let changed = false;
  const args = node.args.map((a) => {
    const sources = (a.sources ?? []).map((s) => {
      if (s.from !== "result") return s;
      const counts = new Map<string, number>();
      for (const ep of episodes) {
        const states = statesOf(ep, memo);
        ep.steps.forEach((step, i) => {
          if (step.logical_tool !== node.tool || !step.ok) return;
          const value = step.arguments[a.path];
          const stems = mentionStems(states[i]);
          const keys = new Set<string>();
          for (const c of states[i].calls) {
            if (c.tool !== s.tool || !c.ok) continue;
            for (
              const l of generalLeaves(c.result, { memo: states[i].leaves })
            ) {
              if (l.key !== s.path.join("\u0000") || l.value !== value) {
                continue;
              }
              const fields = [
                ...(s.path.at(-1) === "*" ? ["*"] : []),
                ...Object.keys(l.parent ?? {}).filter((k) => k !== l.ownKey),
              ];
              for (const k of fields) {
                const text = whereText(l, k);
                if (text !== null && isMentioned(text, stems)) keys.add(k);
              }
            }
          }
          for (const k of keys) counts.set(k, (counts.get(k) ?? 0) + 1);
        });
      }
      const best = [...counts].sort((x, y) =>
        y[1] - x[1] || (x[0] < y[0] ? -1 : 1)
      )[0];
      if (!best || best[1] < 2) return s;
      changed = true;
      return { ...s, where: best[0] };
    });
    return { ...a, sources };
  });
  return changed ? { ...node, id: `${node.id}_mentioned`, args } : null;
}

/**
 * The variant of a lookup that keeps, per argument, only the source that
 * explained the most training calls (the first of its cover): a source
 * that explained a few calls but offers many candidates (every field of a
 * result) can make the node pass its fan-out cap or cost more lookups than
 * it saves. Null when every argument has one source already.
 *
 * @param node The lookup node.
 * @returns The narrowed node (id `<id>_primary`), or null.
 */
export function primaryVariant(node: LookupNode): LookupNode | null {
  if (node.args.every((a) => (a.sources ?? []).length <= 1)) return null;
  return {
    ...node,
    id: `${node.id}_primary`,
    args: node.args.map((a) => ({
      ...a,
      sources: (a.sources ?? []).slice(0, 1),
    })),
  };
}

/**
 * Order a lookup's arguments so that one bound `after` another comes after
 * it (the engine binds them in order), the rest by path.
 *
 * @param args The arguments (sorted in place).
 * @returns The same array.
 */
export function afterLast(args: LookupNode["args"]): LookupNode["args"] {
  const rank = (a: LookupNode["args"][number]) =>
    (a.sources ?? []).some((s) => s.from === "user" && s.after) ? 1 : 0;
  return args.sort((a, b) => rank(a) - rank(b) || (a.path < b.path ? -1 : 1));
}

/**
 * The variants of a lookup that pair two of its user-word arguments of the
 * same shape by position: the second is the word right after the first in
 * the same message (`after`), as a last name follows a first name. Where
 * training shows such a pairing in fewer than the adjacency share of calls
 * (`linkAdjacentWords`), the plain node pairs every word with every other
 * and passes its fan-out cap; this variant, judged by the same training
 * replay, can pay instead. One variant per ordered pair (id
 * `<id>_after_<first>_<second>`).
 *
 * @param node The lookup node.
 * @returns The paired variants (none when no two such arguments).
 */
export function adjacentVariants(node: LookupNode): LookupNode[] {
  const plain = (a: LookupNode["args"][number]) => {
    const s = a.sources ?? [];
    return s.length === 1 && s[0].from === "user" &&
        s[0].after === undefined && s[0].prefix === undefined
      ? s[0]
      : null;
  };
  if (
    node.args.some((a) =>
      (a.sources ?? []).some((s) => s.from === "user" && s.after !== undefined)
    )
  ) return [];
  const out: LookupNode[] = [];
  for (const first of node.args) {
    const f = plain(first);
    if (!f) continue;
    for (const second of node.args) {
      const s = plain(second);
      if (!s || second === first || s.shape !== f.shape) continue;
      const args = node.args.map((a) =>
        a === second ? { ...a, sources: [{ ...s, after: first.path }] } : a
      );
      afterLast(args);
      out.push({
        ...node,
        id: `${node.id}_after_${first.path}_${second.path}`.replace(
          /[^A-Za-z0-9_]/g,
          "_",
        ),
        args,
      });
    }
  }
  return out;
}

/**
 * The variants of a lookup whose arguments are taken together from one
 * earlier record: for each tool whose calls (results or arguments) are a
 * source of at least two of its arguments in the lookup's cover (or of
 * every argument in either cover, when it is another tool), those
 * arguments take their first such source, each `with` the first of them,
 * so that a flight's number goes with its own date and a search repeats
 * one earlier search, not a product of every value with every other. The
 * rest keep their sources. Judged by the same training replay as the
 * plain node. One variant per tool and kind (id `<id>_with_<kind>_<tool>`).
 *
 * @param node The lookup node.
 * @param bindings What training says about the node's tool.
 * @returns The variants (none when no two arguments share such a tool).
 */
export function jointVariants(
  node: LookupNode,
  bindings: readonly Binding[],
): LookupNode[] {
  if (node.args.length < 2) return [];
  const keyOf = (s: RecordSource) => `${s.from}:${s.tool}`;
  /** An argument's record sources (not yet `with` another), lookup cover first. */
  const recordsOf = (path: string, covers: "lookup" | "both") => {
    const b = bindings.find((x) => x.tool === node.tool && x.path === path);
    return [
      ...b?.lookup.sources ?? [],
      ...(covers === "both" ? b?.choice.sources ?? [] : []),
    ].filter((s): s is RecordSource =>
      isRecordSource(s) && s.with === undefined
    );
  };
  const firstOf = (path: string, key: string, covers: "lookup" | "both") =>
    recordsOf(path, covers).find((s) => keyOf(s) === key) ?? null;
  const keys = new Set(
    node.args.flatMap((a) => recordsOf(a.path, "both").map(keyOf)),
  );
  const out: LookupNode[] = [];
  for (const key of [...keys].sort()) {
    const pick = (covers: "lookup" | "both") =>
      node.args.flatMap((a) => {
        const s = firstOf(a.path, key, covers);
        return s ? [{ arg: a, source: s }] : [];
      });
    let joint = pick("lookup");
    // Every argument from one other tool's record, in either cover: a
    // repeat of that record (a one-stop search after a direct one).
    const whole = pick("both");
    if (
      whole.length === node.args.length && joint.length < whole.length &&
      whole[0].source.tool !== node.tool
    ) joint = whole;
    if (joint.length < 2) continue;
    const anchor = joint[0];
    const args = [
      { path: anchor.arg.path, sources: [anchor.source] },
      ...joint.slice(1).map((j) => ({
        path: j.arg.path,
        sources: [{ ...j.source, with: anchor.arg.path }],
      })),
      ...node.args.filter((a) => !joint.some((j) => j.arg === a)),
    ];
    out.push({
      ...node,
      id: `${node.id}_with_${key.replace(/[^A-Za-z0-9_]/g, "_")}`,
      args,
    });
  }
  return out;
}
