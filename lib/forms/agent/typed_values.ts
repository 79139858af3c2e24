/**
 * The user's own words as a source of every string argument of a
 * state-changing tool, learned over the whole domain.
 *
 * A value the user wrote (an address, a reason, a zip code) may be written
 * for any string argument. Each argument's own cover admits the
 * user's text only when it explained 2 of that argument's calls, so an
 * argument seldom made in training (`address1` of an address change seen
 * twice, both copied from a result) refuses the first value a user types.
 * Pooled one level above `poolWriteSources` (which pools by argument name),
 * the user's text is admitted for every string argument of every
 * state-changing tool once training shows users writing such values: at
 * least 2 calls in at least 2 episodes, over all those arguments together
 * (the support any source needs). The value must then stand verbatim in
 * what the user wrote; nothing else is widened.
 *
 * @module
 */
import {
  type Binding,
  type BindingEvidence,
  type Observation,
  sourceKey,
} from "./binding_types.ts";
import type { Source } from "../../package/source.ts";

const USER_TEXT: Source = { from: "user_text" };
const USER_TEXT_KEY = sourceKey(USER_TEXT);

/** What training shows of users writing state-changing values. */
export interface TypedEvidence {
  /** Calls whose value the user wrote verbatim before it. */
  calls: number;
  /** Episode → such calls in it. */
  episodes: Map<string, number>;
}

/**
 * The string arguments of state-changing tools, with their observations.
 *
 * @param bindings The bindings.
 * @param evidence Training observations by `tool \0 path` and the tool effects.
 * @returns The bindings and their observations.
 */
export function stringWrites(
  bindings: Binding[],
  evidence: BindingEvidence,
): { binding: Binding; obs: Observation[] }[] {
  const { groups, effects } = evidence;
  return bindings
    .filter((b) => (effects[b.tool] ?? "write") !== "read")
    .map((binding) => ({
      binding,
      obs: groups.get(`${binding.tool}\u0000${binding.path}`) ?? [],
    }))
    .filter(({ obs }) =>
      obs.length > 0 && obs.every((o) => typeof o.value === "string")
    );
}

/**
 * Count the typed values over the string arguments of state-changing tools.
 *
 * @param writes From {@linkcode stringWrites}.
 * @returns The evidence.
 */
export function typedEvidence(
  writes: { obs: Observation[] }[],
): TypedEvidence {
  let calls = 0;
  const episodes = new Map<string, number>();
  for (const { obs } of writes) {
    for (const o of obs) {
      if (!o.explainedBy.has(USER_TEXT_KEY)) continue;
      calls++;
      episodes.set(o.episode, (episodes.get(o.episode) ?? 0) + 1);
    }
  }
  return { calls, episodes };
}

/**
 * The evidence is enough (2 calls in 2 episodes), optionally with one
 * episode held out.
 *
 * @param e The evidence.
 * @param without An episode to leave out.
 * @returns Whether the user's text is a source of every string argument.
 */
export function typedEnough(e: TypedEvidence, without?: string): boolean {
  const out = without === undefined ? 0 : e.episodes.get(without) ?? 0;
  const episodes = e.episodes.size - (out > 0 ? 1 : 0);
  return e.calls - out >= 2 && episodes >= 2;
}

/**
 * Admit the user's text in the checking cover of every string argument of
 * a state-changing tool when the domain's evidence is enough; counts are
 * recomputed as `poolWriteSources` does.
 *
 * @param bindings The bindings (covers are replaced in place).
 * @param evidence Training observations by `tool \0 path` and the tool effects.
 */
export function poolTypedValues(
  bindings: Binding[],
  evidence: BindingEvidence,
): void {
  const { groups, effects } = evidence;
  const writes = stringWrites(bindings, { groups, effects });
  if (!typedEnough(typedEvidence(writes))) return;
  for (const { binding: b, obs } of writes) {
    const own = new Set(b.choice.sources.map(sourceKey));
    if (own.has(USER_TEXT_KEY)) continue;
    own.add(USER_TEXT_KEY);
    const explained = obs.filter((o) =>
      [...o.explainedBy].some((k) => own.has(k))
    ).length;
    const support = obs.filter((o) => o.explainedBy.has(USER_TEXT_KEY)).length;
    b.choice = {
      ...b.choice,
      sources: [...b.choice.sources, USER_TEXT],
      support: [...b.choice.support, support],
      explained,
      counterexamples: obs.length - explained,
      deterministic: obs.length - explained === 0,
    };
  }
}
