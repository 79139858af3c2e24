/**
 * {@linkcode AgentEngine}: the pure core of the agent form (an `agent`
 * root with `lookup` nodes and a `choice` leaf). It keeps the conversation
 * (user messages, calls), says which read-only lookups are due as soon as
 * their arguments bind, serves the model's reads from what the lookups
 * fetched, and checks a state-changing call the model chose against the
 * candidate sets before anything acts (`choice_check.ts`). It never calls
 * a tool itself: the async runtime (`lib/forms/agent/agent_session.ts`) and
 * the synchronous replay that verifies and evaluates (`agent_replay.ts`)
 * drive it, so both see the same decisions.
 *
 * @module
 */
import type { LeafMemo } from "./call_leaves.ts";
import { canonicalJson } from "../../trace/canonical_json.ts";
import type { BehaviorIr } from "../../package/ir.ts";
import type {
  AgentNode,
  ChoiceNode,
  ChoiceTool,
  LookupNode,
} from "./agent_nodes.ts";
import type { CallRecord, ConversationState } from "./sources.ts";
import { parsedResult } from "./call_leaves.ts";
import {
  type MessageWords,
  type WordsMemo,
  wordsOfMessage,
} from "./user_words.ts";
import {
  checkChoice,
  type ChoiceCheck,
  type ChoiceValue,
  choiceValuesOf,
  shownChoiceCandidates,
} from "./choice_check.ts";
import { addMentionStems } from "./mentions.ts";
import { lookupTuples } from "./lookup_tuples.ts";

/** A lookup the engine wants made. */
export interface LookupCall {
  /** Lookup node id. */
  node: string;
  /** Tool. */
  tool: string;
  /** Arguments. */
  args: Record<string, unknown>;
}

/** How a call entered the conversation. */
export type CallOrigin = "lookup" | "model" | "choice";

/** A recorded call with where it came from. */
export interface EngineCall extends CallRecord {
  /** Who made it. */
  by: CallOrigin;
  /** Writes before it. */
  epoch: number;
  /** The result is not known (an evaluation oracle had none). */
  unknown?: boolean;
}

export type { AgentNode };

/** Default fan-out cap of a lookup node. */
export const DEFAULT_FANOUT = 5;

function callKey(tool: string, args: Record<string, unknown>): string {
  return `${tool}\u0000${canonicalJson(args)}`;
}

/** The agent-form core. */
export class AgentEngine {
  readonly #agent: AgentNode;
  readonly #lookups: LookupNode[];
  readonly #choice: ChoiceNode | null;
  readonly #fanout: number;
  readonly #override: number | undefined;
  readonly #user: string[] = [];
  readonly #userWords: MessageWords[] = [];
  readonly #stems = new Set<string>();
  readonly #words: WordsMemo | undefined;
  readonly #leaves: LeafMemo;
  readonly #calls: EngineCall[] = [];
  readonly #issued = new Map<string, Set<string>>();
  readonly #cache = new Map<string, EngineCall>();
  /** Calls that succeeded since the last write (by anyone). */
  readonly #made = new Set<string>();
  #epoch = 0;
  /** Lookup nodes that had more new candidates than their cap allowed. */
  capped = 0;
  /** The same, by lookup node id. */
  readonly cappedBy: Record<string, number> = {};

  /**
   * Create a `AgentEngine`.
   *
   * @param ir An agent-form IR (root of kind `agent`).
   * @param options Fan-out cap (the node's own when absent); messages
   *   already cut into words (a compile's replays share them).
   * @throws {TypeError} When the root is not an agent node.
   */
  constructor(
    ir: BehaviorIr,
    options: { fanout?: number; words?: WordsMemo; leaves?: LeafMemo } = {},
  ) {
    const root = ir.nodes[ir.root] as AgentNode | undefined;
    if (!root || root.kind !== "agent") {
      throw new TypeError(
        `The IR's root ${ir.root} is not an agent node; run it with BehaviorRuntime`,
      );
    }
    this.#agent = root;
    this.#lookups = root.lookups.map((id) => ir.nodes[id] as LookupNode);
    this.#choice = root.choice ? ir.nodes[root.choice] as ChoiceNode : null;
    this.#fanout = options.fanout ?? root.fanout ?? DEFAULT_FANOUT;
    this.#override = options.fanout;
    this.#words = options.words;
    this.#leaves = options.leaves ?? new WeakMap();
  }

  /** The conversation so far. */
  get state(): ConversationState {
    return {
      user: this.#user,
      calls: this.#calls,
      userWords: this.#userWords,
      stems: this.#stems,
      leaves: this.#leaves,
    };
  }

  /** Calls so far, with origin. */
  get calls(): readonly EngineCall[] {
    return this.#calls;
  }

  /** Writes so far. */
  get epoch(): number {
    return this.#epoch;
  }

  /** The agent node. */
  get node(): AgentNode {
    return this.#agent;
  }

  /**
   * A user message arrived.
   *
   * @param text Its text.
   */
  user(text: string): void {
    this.#user.push(text);
    this.#userWords.push(wordsOfMessage(text, this.#words));
    addMentionStems(this.#stems, text);
  }

  /**
   * Record a call that was made (by a lookup, the model, or a choice).
   * A state-changing call drops every cached lookup result.
   *
   * @param call The call.
   * @param by Who made it.
   * @param options `changesState`: it was a write; `unknown`: no result is known.
   * @returns The recorded call.
   */
  record(
    call: CallRecord,
    by: CallOrigin,
    options: { changesState?: boolean; unknown?: boolean } = {},
  ): EngineCall {
    const rec: EngineCall = {
      ...call,
      result: parsedResult(call.result),
      by,
      epoch: this.#epoch,
      ...(options.unknown ? { unknown: true } : {}),
    };
    this.#calls.push(rec);
    if (options.changesState) {
      this.#epoch++;
      this.#cache.clear();
      this.#made.clear();
    } else {
      if (by === "lookup") this.#cache.set(callKey(call.tool, call.args), rec);
      if (call.ok) this.#made.add(callKey(call.tool, call.args));
    }
    return rec;
  }

  /**
   * The lookup result for this call, when a lookup made it since the last write.
   *
   * @param tool Tool.
   * @param args Arguments.
   * @returns The call, or null.
   */
  cached(tool: string, args: Record<string, unknown>): EngineCall | null {
    return this.#cache.get(callKey(tool, args)) ?? null;
  }

  /**
   * The lookups due now: for each lookup node, every candidate tuple not
   * issued before and not made by anyone since the last write (its result
   * is in the conversation), up to its fan-out cap: past it, a node of one
   * argument gets the first candidates in order up to the cap, a node of
   * several none (and `capped` counts it either way). Marks them issued.
   *
   * @returns Calls to make, node by node.
   */
  dueLookups(): LookupCall[] {
    const out: LookupCall[] = [];
    for (const node of this.#lookups) {
      const issued = this.#issued.get(node.id) ?? new Set<string>();
      const cap = this.#override ?? node.fanout ?? this.#fanout;
      const room = cap - issued.size;
      // One argument over a list: the first items, in the list's order,
      // up to the cap (agents read a customer's orders in order). Several
      // arguments: all or none, since the first tuples of a product of
      // candidates are arbitrary.
      const single = node.args.length === 1;
      const tuples = lookupTuples(node, {
        state: this.state,
        limit: single
          ? Math.max(256, cap + issued.size + 1)
          : cap + issued.size + 1,
      });
      // A read already made since the last write is not made again: its
      // result is in the conversation.
      let fresh = tuples?.filter((t) =>
        !issued.has(canonicalJson(t)) && !this.#made.has(callKey(node.tool, t))
      );
      if (fresh?.length === 0) continue;
      if (!fresh || fresh.length > room) {
        this.capped++;
        this.cappedBy[node.id] = (this.cappedBy[node.id] ?? 0) + 1;
        if (!single || !fresh || room <= 0) continue;
        fresh = fresh.slice(0, room);
      }
      for (const t of fresh) {
        issued.add(canonicalJson(t));
        out.push({ node: node.id, tool: node.tool, args: t });
      }
      this.#issued.set(node.id, issued);
    }
    return out;
  }

  /** State-changing tools training never made, checked by argument name. */
  get unseenTools(): readonly { tool: string; effect: string }[] {
    return this.#choice?.unseen_tools ?? [];
  }

  /** The tools a choice leaf may pick. */
  get choiceTools(): readonly ChoiceTool[] {
    return this.#choice?.tools ?? [];
  }

  /**
   * The candidate values of every argument of every choice tool now, as
   * shown to the model (`user_text` and free arguments as such).
   *
   * @returns Tool → argument path → values or a note.
   */
  choiceCandidates(): Record<string, Record<string, unknown[] | string>> {
    return shownChoiceCandidates(this.choiceValues(), this.#user);
  }

  /**
   * The values each restricted argument of each choice tool may take now:
   * the enumerated candidates, whether the user's text is a source too, and
   * whether any source takes values from the data (null: a free argument).
   *
   * @returns Tool → argument path → candidates.
   */
  choiceValues(): Record<string, Record<string, ChoiceValue | null>> {
    return choiceValuesOf(this.choiceTools, this.state);
  }

  /**
   * Check a state-changing call the model chose: the tool must be one the
   * choice leaf offers (or one training never made, checked by argument
   * name), and every argument value must be allowed by its sources in the
   * current state.
   *
   * @param tool Tool.
   * @param args Arguments.
   * @returns ok, or why not.
   */
  check(tool: string, args: Record<string, unknown>): ChoiceCheck {
    return checkChoice({ tool, args }, {
      tools: this.choiceTools,
      unseen: this.unseenTools,
      state: this.state,
    });
  }
}
