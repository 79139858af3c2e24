/**
 * Binding sources: the candidate values each source (`Source`, in
 * `../core/source.ts`) offers in a conversation so
 * far. Shared by the binding learner (training), the agent-form runtime
 * (lookups and choice checks) and the replay that verifies and evaluates
 * both, so all three see the same candidates.
 *
 * @module
 */
import { canonicalJson } from "../../trace/canonical_json.ts";
import type { GeneralPath, Source } from "../../package/source.ts";
import {
  fitsShape,
  type MessageWords,
  type WordsMemo,
  wordsOfMessage,
} from "./user_words.ts";
import { isMentioned, mentionStems } from "./mentions.ts";
import { datesInWords } from "./user_dates.ts";
import { saysValue } from "./user_phrases.ts";

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

/**
 * Leaves of result objects already walked, by object (results are never
 * changed): a compile's builds and replays share one, an engine keeps its
 * own.
 */
export type LeafMemo = WeakMap<object, Leaf[]>;

/** What a compile's builds and replays share: messages cut into words, results walked. */
export interface SourceMemo {
  /** Messages already cut into words. */
  words?: WordsMemo;
  /** Results already walked into leaves. */
  leaves?: LeafMemo;
}

/** Options of {@linkcode generalLeaves}. */
export interface GeneralLeavesOptions {
  /**
   * How deep to walk.
   * @default 8
   */
  maxDepth?: number;
  /** Where leaves of results already walked are kept (used at the default depth only). */
  memo?: LeafMemo;
}

/** Objects with more keys than this are keyed by data: their keys generalize to `*`. */
export const WIDE_OBJECT = 10;

const ID_KEY = /\d/;

/** A key a schema names (`order_id`), not data (`Action Camera`, `SFO`). */
const SCHEMA_KEY = /^[a-z][a-z_]*$/;

/**
 * Parse JSON text that holds an object or a list; anything else as is.
 *
 * @param value Any value.
 * @returns The parsed value, or the value.
 */
export function parsedResult(value: unknown): unknown {
  if (typeof value !== "string") return value;
  const t = value.trimStart();
  if (!t.startsWith("{") && !t.startsWith("[")) return value;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

/**
 * Every primitive leaf of a value with its generalized path.
 *
 * @param value A result (JSON text is parsed).
 * @param maxDepth How deep to walk.
 * @returns Leaves in document order.
 *
 * @example
 * ```ts
 * import { generalLeaves } from "./sources.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 * deepStrictEqual(
 *   generalLeaves({ orders: ["#W1", "#W2"] }).map((l) => [l.path, l.value]),
 *   [[["orders", "[*]"], "#W1"], [["orders", "[*]"], "#W2"]],
 * );
 * ```
 */
export function generalLeaves(
  value: unknown,
  options: GeneralLeavesOptions = {},
): Leaf[] {
  const maxDepth = options.maxDepth ?? 8;
  const memo = typeof value === "object" && value !== null && maxDepth === 8
    ? options.memo
    : undefined;
  const hit = memo?.get(value as object);
  if (hit) return hit;
  const out: Leaf[] = [];
  const walk = (
    v: unknown,
    path: GeneralPath,
    depth: number,
    parent: Record<string, unknown> | null,
    ownKey: string | null,
    items: ListItem[],
  ) => {
    if (
      typeof v === "string" || typeof v === "number" || typeof v === "boolean"
    ) {
      out.push({
        path,
        key: path.join("\u0000"),
        value: v,
        parent,
        ownKey,
        items,
      });
      return;
    }
    if (depth <= 0 || typeof v !== "object" || v === null) return;
    if (Array.isArray(v)) {
      const list = path.join("\u0000");
      v.forEach((x, index) =>
        walk(x, [...path, "[*]"], depth - 1, null, null, [
          ...items,
          { list, index },
        ])
      );
      return;
    }
    const keys = Object.keys(v);
    const wide = keys.length > WIDE_OBJECT &&
      !keys.every((k) => SCHEMA_KEY.test(k));
    for (const k of keys) {
      const seg = wide || ID_KEY.test(k) ? "*" : k;
      walk(
        (v as Record<string, unknown>)[k],
        [...path, seg],
        depth - 1,
        v as Record<string, unknown>,
        k,
        items,
      );
    }
  };
  walk(parsedResult(value), [], maxDepth, null, null, []);
  memo?.set(value as object, out);
  return out;
}

/** A leaf of a result: generalized path, its key form, the value. */
export interface Leaf {
  /** Generalized path. */
  path: GeneralPath;
  /** The path joined (for comparisons). */
  key: string;
  /** The value. */
  value: string | number | boolean;
  /** The object holding it (null in a list). */
  parent: Record<string, unknown> | null;
  /** Its key in that object. */
  ownKey: string | null;
  /** The list items it sits in, outermost first. */
  items: ListItem[];
}

/** One list a leaf sits in (its generalized path, joined) and its index there. */
export interface ListItem {
  /** The list's generalized path, joined. */
  list: string;
  /** The item's index. */
  index: number;
}

/**
 * The text a `where` filter reads for a leaf: the sibling field, or (`*`)
 * the leaf's own key.
 *
 * @param leaf A result leaf.
 * @param where The filter key.
 * @returns The text, or null when there is none.
 */
export function whereText(leaf: Leaf, where: string): string | null {
  if (where === "*") return leaf.ownKey;
  const v = leaf.parent?.[where];
  return typeof v === "string" ? v : null;
}

/** Path of an argument leaf with list indices generalized (`item_ids[*]`). */
export function generalArgPath(path: string): string {
  return path.replace(/\[\d+\]/g, "[*]");
}

/** Whether a generalized path matches a concrete argument leaf path. */
function argPathMatches(general: string, concrete: string): boolean {
  return generalArgPath(concrete) === general;
}

/** Argument leaves of a call with their paths (`item_ids[0]`). */
export function argumentLeafList(
  args: Record<string, unknown>,
): { path: string; value: unknown }[] {
  const out: { path: string; value: unknown }[] = [];
  const walk = (v: unknown, path: string) => {
    if (typeof v === "object" && v !== null) {
      if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${path}[${i}]`));
      else {
        for (const [k, x] of Object.entries(v)) {
          walk(x, path ? `${path}.${k}` : k);
        }
      }
      return;
    }
    if (path) out.push({ path, value: v });
  };
  walk(args, "");
  return out;
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
