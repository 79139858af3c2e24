/**
 * Links between bindings, after each argument's own cover is chosen:
 * adjacent user words (a first and a last name) and the pooling of
 * state-changing arguments' sources by argument name.
 *
 * @module
 */
import type { Source } from "../../package/source.ts";
import {
  type Binding,
  type BindingEvidence,
  type Observation,
  sourceKey,
} from "./binding_types.ts";

/**
 * Where two arguments of a tool are both user words and the second always
 * stood right after the first in the same message (a first and a last
 * name), the second's source becomes `after` the first, which keeps a
 * lookup from pairing every word with every other.
 *
 * @param bindings The bindings (sources are updated in place).
 * @param options `groups`: training observations by `tool\u0000path`;
 *   `adjacentShare`: least share of paired calls where the second word
 *   stood right after the first (`ADJACENT_SHARE` in `binding_types.ts` is
 *   the compiler's default).
 */
export function linkAdjacentWords(
  bindings: Binding[],
  options: { groups: Map<string, Observation[]>; adjacentShare: number },
): void {
  const { groups } = options;
  const userOnly = (b: Binding) =>
    b.lookup.sources.length === 1 && b.lookup.sources[0].from === "user" &&
    b.lookup.speculative;
  for (const a of bindings) {
    if (!userOnly(a)) continue;
    for (const b of bindings) {
      if (b === a || b.tool !== a.tool || !userOnly(b)) continue;
      const oa = groups.get(`${a.tool}\u0000${a.path}`)!;
      const ob = new Map(
        groups.get(`${b.tool}\u0000${b.path}`)!.map((o) => [o.call, o]),
      );
      let pairs = 0, adjacent = 0;
      for (const x of oa) {
        const y = ob.get(x.call);
        if (!y) continue;
        pairs++;
        const next = [...x.userWordAt].some(([m, at]) =>
          at.some((j) => y.userWordAt.get(m)?.includes(j + 1))
        );
        if (next) adjacent++;
      }
      const src = b.lookup.sources[0] as Extract<Source, { from: "user" }>;
      if (
        pairs >= 2 && adjacent >= options.adjacentShare * pairs &&
        src.after === undefined && a.lookup.sources[0] !== src
      ) {
        src.after = a.path;
      }
    }
  }
}

/**
 * Arguments of state-changing tools with the same name take the same kind
 * of value (`address1`, `order_id`, `payment_method_id`): each such
 * argument's checking cover also admits the sources the others were seen
 * with, so a write made rarely in training is still checked against every
 * kind of source training saw for that argument.
 *
 * @param bindings The bindings (covers are widened in place).
 * @param evidence Training observations by `tool \0 path` and the tool effects.
 */
export function poolWriteSources(
  bindings: Binding[],
  evidence: BindingEvidence,
): void {
  const { groups, effects } = evidence;
  const writes = bindings.filter((b) =>
    (effects[b.tool] ?? "write") !== "read"
  );
  const pooled = new Map<string, Map<string, Source>>();
  for (const b of writes) {
    const m = pooled.get(b.path) ?? new Map<string, Source>();
    b.choice.sources.forEach((s, i) => {
      if (b.choice.support[i] >= (s.from === "const" ? 3 : 2)) {
        m.set(sourceKey(s), s);
      }
    });
    pooled.set(b.path, m);
  }
  for (const b of writes) {
    const own = new Set(b.choice.sources.map(sourceKey));
    const extra = [...(pooled.get(b.path) ?? new Map<string, Source>())]
      .filter(([k]) => !own.has(k));
    if (!extra.length) continue;
    const keys = new Set([...own, ...extra.map(([k]) => k)]);
    const obs = groups.get(`${b.tool}\u0000${b.path}`) ?? [];
    const explained = obs.filter((o) =>
      [...o.explainedBy].some((k) => keys.has(k))
    ).length;
    b.choice = {
      ...b.choice,
      sources: [...b.choice.sources, ...extra.map(([, s]) => s)],
      support: [...b.choice.support, ...extra.map(() => 0)],
      explained,
      counterexamples: obs.length - explained,
      deterministic: obs.length - explained === 0,
    };
  }
}
