/**
 * Binding sources: the candidate values each source (`Source`, in
 * `lib/package/source.ts`) offers in a conversation so
 * far. Shared by the binding learner (training), the agent-form runtime
 * (lookups and choice checks) and the replay that verifies and evaluates
 * both, so all three see the same candidates.
 *
 * @module
 */
import { canonicalJson } from "../../trace/canonical_json.ts";
import type { Source } from "../../package/source.ts";
import {
  fitsShape,
  type MessageWords,
  type WordsMemo,
  wordsOfMessage,
} from "./user_words.ts";
import { isMentioned, mentionStems } from "./mentions.ts";
import { datesInWords } from "./user_dates.ts";
import { saysValue } from "./user_phrases.ts";
import {
  argumentLeafList,
  generalArgPath,
  generalLeaves,
  type LeafMemo,
  type ListItem,
  whereText,
} from "./call_leaves.ts";

/** One call made in a conversation. */
export interface CallRecord {
  /** Tool name. */
  tool: string;
  /** Arguments. */
  args: Record<string, unknown>;
  /** Whether it succeeded. */
  ok: boolean;
  /** Its result (parsed when it was JSON text). */
  result: unknown;
}

/** What is known at a point of a conversation. */
export interface ConversationState {
  /** User messages so far. */
  user: string[];
  /** Words of each user message (computed when absent). */
  userWords?: MessageWords[];
  /** {@linkcode mentionStems} of the user messages (computed when absent). */
  stems?: Set<string>;
  /** Calls so far, in order (failed ones included). */
  calls: CallRecord[];
  /** Leaves of the results already walked (none kept when absent). */
  leaves?: LeafMemo;
}

/** What a compile's builds and replays share: messages cut into words, results walked. */
export interface SourceMemo {
  /** Messages already cut into words. */
  words?: WordsMemo;
  /** Results already walked into leaves. */
  leaves?: LeafMemo;
}

/** Whether a generalized path matches a concrete argument leaf path. */
function argPathMatches(general: string, concrete: string): boolean {
  return generalArgPath(concrete) === general;
}

/** Key of a value in candidate sets. */
export function valueKey(v: unknown): string {
  return typeof v === "string" ? `s:${v}` : canonicalJson(v);
}

/** A source whose values are an earlier call's (its result or arguments). */
export type RecordSource = Extract<Source, { from: "result" | "arg" }>;

/**
 * Whether a source takes an earlier call's values.
 *
 * @param s A source.
 * @returns True for `result` and `arg` sources.
 */
export function isRecordSource(s: Source): s is RecordSource {
  return s.from === "result" || s.from === "arg";
}

/** A value of an earlier call, with the call and the list items it sits in. */
export interface RecordValue {
  /** The value. */
  value: unknown;
  /** Index of the call in the conversation. */
  call: number;
  /** The list items it sits in (result lists `r:`, argument lists `a:`). */
  items: ListItem[];
}

/**
 * Every value a `result` or `arg` source finds in the conversation, with
 * where it sits (for `with`: values taken together from one record).
 *
 * @param source A `result` or `arg` source (its `with` is not applied here).
 * @param state The conversation so far.
 * @returns Values in the order they appeared (repeats included).
 */
export function recordValues(
  source: RecordSource,
  state: ConversationState,
): RecordValue[] {
  const out: RecordValue[] = [];
  if (source.from === "arg") {
    state.calls.forEach((c, call) => {
      if (c.tool !== source.tool) return;
      for (const l of argumentLeafList(c.args)) {
        if (!argPathMatches(source.path, l.path)) continue;
        out.push({ value: l.value, call, items: argItems(l.path) });
      }
    });
    return out;
  }
  const want = source.path.join("\u0000");
  const stems = source.where === undefined
    ? null
    : state.stems ?? mentionStems(state);
  state.calls.forEach((c, call) => {
    if (c.tool !== source.tool || !c.ok) return;
    for (const l of generalLeaves(c.result, { memo: state.leaves })) {
      if (l.key !== want) continue;
      if (stems) {
        const text = whereText(l, source.where!);
        if (text === null || !isMentioned(text, stems)) continue;
      }
      out.push({
        value: l.value,
        call,
        items: l.items.map((i) => ({ list: `r:${i.list}`, index: i.index })),
      });
    }
  });
  return out;
}

/** The list items of a concrete argument path (`flights[1].date`). */
function argItems(path: string): ListItem[] {
  const out: ListItem[] = [];
  for (const m of path.matchAll(/\[(\d+)\]/g)) {
    out.push({
      list: `a:${generalArgPath(path.slice(0, m.index))}`,
      index: Number(m[1]),
    });
  }
  return out;
}

/**
 * Candidate values of a source in a state.
 *
 * @param source The source (`user_text` enumerates nothing).
 * @param state The conversation so far.
 * @param bound Values already chosen for other arguments (for `after`;
 *   `with` needs where they came from, which `lookupTuples` keeps, and is
 *   not applied here).
 * @returns Distinct values, in the order they appeared.
 */
export function candidatesOf(
  source: Source,
  state: ConversationState,
  bound: Record<string, unknown> = {},
): unknown[] {
  const out = new Map<string, unknown>();
  const add = (v: unknown) => {
    const k = valueKey(v);
    if (!out.has(k)) out.set(k, v);
  };
  switch (source.from) {
    case "result":
    case "arg":
      for (const r of recordValues(source, state)) add(r.value);
      break;
    case "user":
      state.user.forEach((text, m) => {
        if (source.latest && m !== state.user.length - 1) return;
        const mw = state.userWords?.[m] ?? wordsOfMessage(text);
        const after = source.after !== undefined;
        const all = after ? mw.words : mw.all;
        const shapes = after ? mw.wordShapes : mw.allShapes;
        all.forEach((w, i) => {
          if (!fitsShape(source.shape, { word: w, shape: shapes[i] })) return;
          if (after) {
            if (!(source.after! in bound) || i === 0) return;
            if (mw.words[i - 1] !== bound[source.after!]) return;
          }
          add(source.prefix ? source.prefix + w : w);
        });
      });
      break;
    case "const":
      source.values.forEach(add);
      break;
    case "user_date":
      for (const text of state.user) {
        datesInWords(text, source.year).forEach(add);
      }
      break;
    case "user_word":
      for (const v of source.values) {
        if (state.user.some((t) => saysValue(v, t))) add(v);
      }
      break;
    case "user_text":
      break;
  }
  return [...out.values()];
}

/** What {@linkcode allows} checks against a source. */
export interface AllowsCheck {
  /** The conversation so far. */
  state: ConversationState;
  /** The value to check. */
  value: unknown;
  /** Values of the call's other arguments.
   * @default {} */
  bound?: Record<string, unknown>;
}

/**
 * Whether a value is allowed by a source in a state: it is one of the
 * candidates, or (`user_text`) the user wrote it verbatim.
 *
 * @param source The source.
 * @param check The conversation so far, the value, the call's other arguments.
 * @returns True when allowed.
 */
export function allows(
  source: Source,
  check: AllowsCheck,
): boolean {
  const { state, value, bound = {} } = check;
  if (source.from === "user_text") {
    return typeof value === "string" && value.length >= 2 &&
      state.user.some((t) => t.includes(value));
  }
  const k = valueKey(value);
  return candidatesOf(source, state, bound).some((c) => valueKey(c) === k);
}
