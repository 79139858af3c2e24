/**
 * The records of binding learning (`bindings.ts`) that the binding links
 * (`binding_links.ts`) read too: a cover of sources, a binding, one training
 * observation, a source's key, and the two shares that tune them.
 *
 * @module
 */
import type { ConversationState } from "./sources.ts";
import type { Source } from "../../package/source.ts";
import { canonicalJson } from "../../trace/canonical_json.ts";

/** One union of sources and how well it explains training. */
export interface Cover {
  /** The sources. */
  sources: Source[];
  /** Calls explained by each source (same order). */
  support: number[];
  /** Calls the union explains. */
  explained: number;
  /** Calls it does not explain. */
  counterexamples: number;
  /** Mean number of candidates it offered where it offered any. */
  mean_candidates: number;
  /** Zero counterexamples and every source supported enough. */
  deterministic: boolean;
  /**
   * Good enough for a speculative lookup: sources supported enough and at
   * least {@linkcode SPECULATIVE_COVERAGE} of the calls explained. A lookup
   * only fetches; its result serves a call only when the agent asks for
   * exactly that call, so a contested binding costs an extra read, never a
   * wrong action. The binding's grade stays what its evidence says.
   */
  speculative: boolean;
}

/**
 * Share of calls in which a second user-word argument must stand right
 * after the first for the lookup to pair them that way (the rest become
 * calls the model asks for).
 */
export const ADJACENT_SHARE = 0.8;

/** Share of training calls a contested binding must explain to drive a lookup. */
export const SPECULATIVE_COVERAGE = 0.9;

/** What holding each training episode out showed for one argument. */
export interface Holdout {
  /** Training calls checked. */
  calls: number;
  /** Calls the cover learned without their episode would have refused. */
  refused: number;
  /** Episodes behind the refused calls (up to 10). */
  episodes: string[];
}

/** What training says about one argument of one tool. */
export interface Binding {
  /** Tool. */
  tool: string;
  /** Argument path with list items as `[*]`. */
  path: string;
  /** Calls of the tool that had this argument. */
  applicable: number;
  /** Distinct values seen. */
  variety: number;
  /** Up to 10 episodes behind it. */
  episodes: string[];
  /** The enumerable cover (lookups). */
  lookup: Cover;
  /** The checking cover (choices). */
  choice: Cover;
  /**
   * State-changing tools only: the checking cover judged with each
   * training episode held out in turn (`binding_holdout.ts`).
   */
  holdout?: Holdout;
}

/** One training value of an argument and what explains it. */
export interface Observation {
  /** Episode id. */
  episode: string;
  call: string;
  value: unknown;
  state: ConversationState;
  explainedBy: Set<string>;
  userWordAt: Map<number, number[]>;
}

/** Key of a source (its canonical JSON). */
export function sourceKey(s: Source): string {
  return canonicalJson(s);
}

/** What the binding passes learn from: the training observations and the tool effects. */
export interface BindingEvidence {
  /** Training observations by `tool \0 path`. */
  groups: Map<string, Observation[]>;
  /** Tool effects. */
  effects: Record<string, string>;
}
