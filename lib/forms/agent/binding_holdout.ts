/**
 * Leave-one-episode-out validation of the checking covers of
 * state-changing tools, inside the training data.
 *
 * A choice leaf refuses a value its cover does not allow. Training alone
 * cannot show whether the cover is complete: every training value is
 * explained by construction. Holding each training episode out in turn and
 * asking whether the cover learned from the others would have allowed that
 * episode's values estimates how often the cover refuses a correct value it
 * has not seen the like of (a kind of source seen in one episode only, a
 * value typed by a user where training only saw values from results). The
 * agent form leaves an argument whose cover fails this check to the model
 * (see `build_agent_form.ts`): a guard that refuses correct calls would make the
 * package worse than the agent alone.
 *
 * The check mirrors the cover's rules: a source allows a value when it
 * explains at least 2 calls of the other episodes (a constant set is
 * rebuilt from the other episodes' values and needs 3 calls), in the tool's
 * own calls or, as `poolWriteSources` pools them, in another
 * state-changing tool's argument of the same name; the user's text allows
 * a string value when the other episodes show users writing such values
 * (`typed_values.ts`).
 *
 * @module
 */
import { valueKey } from "./sources.ts";
import { type Binding, type Observation, sourceKey } from "./binding_types.ts";
import { stringWrites, typedEnough, typedEvidence } from "./typed_values.ts";

const CONST_PREFIX = '{"from":"const"';
const USER_TEXT = sourceKey({ from: "user_text" });

interface GroupCounts {
  obs: Observation[];
  /** Source key → episode → calls it explains there. */
  byEpisode: Map<string, Map<string, number>>;
  /** Source key → calls it explains. */
  total: Map<string, number>;
}

function countsOf(obs: Observation[]): GroupCounts {
  const byEpisode = new Map<string, Map<string, number>>();
  const total = new Map<string, number>();
  for (const o of obs) {
    for (const k of o.explainedBy) {
      if (k.startsWith(CONST_PREFIX)) continue;
      total.set(k, (total.get(k) ?? 0) + 1);
      const m = byEpisode.get(k) ?? new Map<string, number>();
      m.set(o.episode, (m.get(o.episode) ?? 0) + 1);
      byEpisode.set(k, m);
    }
  }
  return { obs, byEpisode, total };
}

/** A source explains enough calls of the group without `episode`. */
function supported(g: GroupCounts, key: string, episode: string): boolean {
  const n = (g.total.get(key) ?? 0) -
    (g.byEpisode.get(key)?.get(episode) ?? 0);
  return n >= 2;
}

/** The group's constant set rebuilt without `episode` allows `value`. */
function constAllows(
  g: GroupCounts,
  episode: string,
  value: unknown,
  maxEnum: number,
): boolean {
  const rest = g.obs.filter((o) => o.episode !== episode);
  const values = new Set(rest.map((o) => valueKey(o.value)));
  if (values.size > maxEnum || rest.length < 3) return false;
  if (values.size * 2 > rest.length) return false;
  return values.has(valueKey(value));
}

/** What {@linkcode leaveOneEpisodeOut} holds out and how far it goes. */
export interface HoldoutEvidence {
  /** Training observations by `tool \0 path`. */
  groups: Map<string, Observation[]>;
  /** Tool effects (`read` tools are skipped). */
  effects: Record<string, string>;
  /** At most this many distinct constants make a constant set. */
  maxEnum: number;
}

/**
 * Set `holdout` on every binding of a state-changing tool.
 *
 * @param bindings The learned bindings (changed in place).
 * @param evidence Training observations, tool effects, the constant-set cap.
 */
export function leaveOneEpisodeOut(
  bindings: Binding[],
  evidence: HoldoutEvidence,
): void {
  const { groups, effects, maxEnum } = evidence;
  const writes = bindings.filter((b) =>
    (effects[b.tool] ?? "write") !== "read"
  );
  const stringArgs = stringWrites(bindings, { groups, effects });
  const strings = new Set(stringArgs.map((w) => w.binding));
  const typed = typedEvidence(stringArgs);
  const counts = new Map<string, GroupCounts>();
  for (const b of writes) {
    const key = `${b.tool}\u0000${b.path}`;
    counts.set(key, countsOf(groups.get(key) ?? []));
  }
  for (const b of writes) {
    const own = counts.get(`${b.tool}\u0000${b.path}`)!;
    const peers = writes.filter((p) => p.path === b.path)
      .map((p) => counts.get(`${p.tool}\u0000${p.path}`)!);
    let refused = 0;
    const episodes = new Set<string>();
    const typedOk = strings.has(b);
    for (const o of own.obs) {
      const allowed = (typedOk && o.explainedBy.has(USER_TEXT) &&
        typedEnough(typed, o.episode)) ||
        peers.some((g) =>
          [...o.explainedBy].some((k) =>
            k.startsWith(CONST_PREFIX) ? false : supported(g, k, o.episode)
          ) || constAllows(g, o.episode, o.value, maxEnum)
        );
      if (!allowed) {
        refused++;
        episodes.add(o.episode);
      }
    }
    b.holdout = {
      calls: own.obs.length,
      refused,
      episodes: [...episodes].sort().slice(0, 10),
    };
  }
}
