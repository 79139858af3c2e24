/**
 * One seed of the held-out evaluation: split the episodes by task (a
 * quarter of the tasks held out, chosen by a seeded shuffle), compile ONE
 * package from the training split's successful episodes (no routing by
 * family: the package sees only what the agent sees), and replay every
 * held-out episode through it.
 *
 * Scoring (never flattering; only the agent's calls count: calls the user
 * makes on their own device in dual-control conversations are counted
 * apart as `user_calls`):
 * - a call is **deterministic** only when the package made exactly that
 *   call (same tool, same arguments, between the same writes) before the
 *   agent asked for it, with no model call;
 * - a state-changing call the package makes that the episode did not
 *   make is **wrong**; a refused or unresolved one is a **stop**;
 * - model turns: every assistant turn that said something to the user,
 *   plus every turn with a call the package did not already make (a
 *   choice leaf is one model call; parallel calls in one turn are one
 *   turn). Choice leaves are scored as if the model answered as the agent
 *   did.
 *
 * @module
 */
import { compileBehavior } from "../lib/compiler/compile_behavior.ts";
import { formOf, type FormOptions } from "../lib/forms/form_table.ts";
import type { EvalEpisode, TauData } from "./tau_data.ts";

/** What one seed measured. */
export interface SeedResult {
  /** The split seed. */
  seed: number;
  /** Training episodes used (successful ones). */
  train: number;
  /** Held-out episodes (all of them, failed ones too). */
  held_out: number;
  /** The form the compiler chose. */
  form: string;
  /** Held-out tool calls of the agent (never the user's). */
  calls: number;
  /** Held-out tool calls the user made on their own device (dual control), counted apart. */
  user_calls: number;
  /** Made by the package with no model call. */
  deterministic: number;
  /** State-changing calls through the choice leaf. */
  choices: number;
  /** Reads the model still asked for. */
  model_reads: number;
  /** Episodes where the package stopped, and calls after. */
  stops: number;
  /** Calls after a stop. */
  after_stop: number;
  /** Wrong state-changing calls. */
  wrong: number;
  /** Lookups the episode did not make. */
  extra_lookups: number;
  /** Times a lookup's candidates passed the cap. */
  capped: number;
  /** Assistant turns of the agent. */
  agent_turns: number;
  /** Model turns with the package. */
  package_turns: number;
  /** Reads the model still asked for, by tool. */
  model_reads_by_tool: Record<string, number>;
  /** Why held-out episodes stopped (counted). */
  stop_reasons: Record<string, number>;
  /** Candidates per argument of the choices made (summed) and arguments counted. */
  choice_candidates: { total: number; args: number; max: number };
  /** Lookup nodes kept. */
  lookups: string[];
}

/** Seeded uniform numbers in [0, 1) (mulberry32). */
export function seededUniform(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Split by task: a quarter of the tasks (at least one) held out.
 *
 * @param episodes The episodes.
 * @param seed The seed.
 * @returns Training and held-out episodes.
 */
export function splitByTask(
  episodes: EvalEpisode[],
  seed: number,
): { train: EvalEpisode[]; held: EvalEpisode[] } {
  const tasks = [...new Set(episodes.map((e) => e.task))].sort();
  const r = seededUniform(seed);
  const held = new Set(
    tasks.map((t) => [r(), t] as const).sort((a, b) => a[0] - b[0])
      .slice(0, Math.max(1, Math.round(tasks.length / 4))).map(([, t]) => t),
  );
  return {
    train: episodes.filter((e) => !held.has(e.task)),
    held: episodes.filter((e) => held.has(e.task)),
  };
}

/**
 * The training and judged episodes of one seed: the held-out split, or in
 * tuning mode (`validate`) the held-out split set aside untouched and the
 * training split split again (seed + 1000), judged on its own validation
 * part.
 *
 * @param episodes The episodes.
 * @param seed The seed.
 * @param options `validate`: judge on the validation part.
 * @returns Training and judged episodes.
 */
export function splitFor(
  episodes: EvalEpisode[],
  seed: number,
  options: { validate?: boolean } = {},
): { train: EvalEpisode[]; held: EvalEpisode[] } {
  const split = splitByTask(episodes, seed);
  return options.validate ? splitByTask(split.train, seed + 1000) : split;
}

/**
 * The agent's turns that still ask the model with the package: every turn
 * that said something to the user and every turn with a call the model
 * still had to ask for (all of them when the form does not say per call).
 */
function modelTurns(e: EvalEpisode, needsModel: boolean[] | null): number {
  if (needsModel === null) return e.turns;
  const turns = new Set<number>(e.textTurns);
  needsModel.forEach((needs, i) => {
    if (needs) turns.add(e.turnOf[i]);
  });
  return turns.size;
}

/**
 * Evaluate one seed.
 *
 * @param data The loaded file.
 * @param seed Split seed.
 * @param options The agent form's tuning parameters (fan-out cap, least
 *   yield, budget, adjacency, speculative coverage; the compiler's
 *   defaults when absent); `validate`: judge on a validation part of the
 *   training split instead of the held-out split (for tuning); `tune`:
 *   false keeps the compiler from choosing the parameters left unset.
 * @returns The measures.
 */
export function evaluateSeed(
  data: TauData,
  seed: number,
  options: FormOptions & { validate?: boolean } = {},
): SeedResult {
  const { train, held } = splitFor(data.episodes, seed, options);
  const trainOk = train.filter((e) => e.norm.success === true);
  const result = compileBehavior(trainOk.map((e) => e.norm), {
    name: "tau",
    effects: data.effects,
    fanout: options.fanout,
    minYield: options.minYield,
    extraLookupBudget: options.extraLookupBudget,
    adjacentShare: options.adjacentShare,
    speculativeCoverage: options.speculativeCoverage,
    tune: options.tune,
  });
  const ir = result.compiled.ir;
  const form = formOf(ir);
  const out: SeedResult = {
    seed,
    train: trainOk.length,
    held_out: held.length,
    form: form.name,
    calls: 0,
    user_calls: 0,
    deterministic: 0,
    choices: 0,
    model_reads: 0,
    stops: 0,
    after_stop: 0,
    wrong: 0,
    extra_lookups: 0,
    capped: 0,
    agent_turns: 0,
    package_turns: 0,
    stop_reasons: {},
    model_reads_by_tool: {},
    choice_candidates: { total: 0, args: 0, max: 0 },
    lookups: form.lookups(ir),
  };
  for (const e of held) {
    out.calls += e.norm.steps.length;
    out.user_calls += e.userCalls;
    out.agent_turns += e.turns;
    const r = form.replay(result.compiled, {
      episode: e.norm,
      effects: data.effects,
    });
    out.deterministic += r.deterministic;
    out.choices += r.choices;
    out.after_stop += r.after_stop;
    out.extra_lookups += r.extra_lookups;
    for (const c of r.choice_candidates) {
      out.choice_candidates.total += c;
      out.choice_candidates.args++;
      out.choice_candidates.max = Math.max(out.choice_candidates.max, c);
    }
    out.capped += r.capped;
    out.wrong += r.wrong;
    if (r.stop_reason) {
      out.stops++;
      const why = r.stop_reason.replace(/ = .*/, "");
      out.stop_reasons[why] = (out.stop_reasons[why] ?? 0) + 1;
    }
    for (const t of r.model_reads) {
      out.model_reads++;
      out.model_reads_by_tool[t] = (out.model_reads_by_tool[t] ?? 0) + 1;
    }
    out.package_turns += modelTurns(e, r.needs_model) + r.model_calls;
  }
  return out;
}
