/**
 * The candidate argument tuples of a lookup node in a conversation: the
 * product of each argument's candidates, in order, with an argument bound
 * `after` another narrowed by the value chosen for it, and one bound
 * `with` another taken from the same record (call and list item) as it.
 *
 * @module
 */
import type { LookupNode } from "./agent_nodes.ts";
import {
  candidatesOf,
  type ConversationState,
  isRecordSource,
  type RecordSource,
  type RecordValue,
  recordValues,
  valueKey,
} from "./sources.ts";

/** Where each chosen value came from (only for arguments another is `with`). */
type Origins = Record<string, RecordValue[]>;

/** A partial tuple and where its values came from. */
interface PartialTuple {
  values: Record<string, unknown>;
  origins: Origins;
}

/**
 * Whether two values sit in one record: the same call and, in every list
 * both sit in, the same item.
 */
function sameRecord(a: RecordValue, b: RecordValue): boolean {
  if (a.call !== b.call) return false;
  for (const x of a.items) {
    const y = b.items.find((i) => i.list === x.list);
    if (y && y.index !== x.index) return false;
  }
  return true;
}

/** Where {@linkcode lookupTuples} takes its values, and how many it may give. */
export interface TuplesAt {
  /** The conversation so far. */
  state: ConversationState;
  /** Most tuples wanted. */
  limit: number;
}

/**
 * Every candidate tuple of a lookup node, or null when there are more than
 * `limit`.
 *
 * @param node The lookup node.
 * @param at The conversation so far and the fan-out cap.
 * @returns The tuples in order, or null past the limit.
 */
export function lookupTuples(
  node: LookupNode,
  at: TuplesAt,
): Record<string, unknown>[] | null {
  const { state, limit } = at;
  const anchors = new Set(
    node.args.flatMap((a) =>
      (a.sources ?? []).flatMap((s) =>
        isRecordSource(s) && s.with !== undefined ? [s.with] : []
      )
    ),
  );
  const records = new Map<RecordSource, RecordValue[]>();
  const recordsOf = (s: RecordSource) => {
    let r = records.get(s);
    if (!r) records.set(s, r = recordValues(s, state));
    return r;
  };
  let partial: PartialTuple[] = [{ values: {}, origins: {} }];
  // Partial tuples may be many (every capitalized word for a first name)
  // before a later argument (`after` it) narrows them; only the final set
  // is held to the limit.
  const partialLimit = Math.max(limit, 256);
  for (const [i, arg] of node.args.entries()) {
    const cap = i === node.args.length - 1 ? limit : partialLimit;
    const anchor = anchors.has(arg.path);
    const next: PartialTuple[] = [];
    for (const bound of partial) {
      // Value key → where it came from (an anchor keeps every record).
      const found = new Map<string, { value: unknown; from: RecordValue[] }>();
      const add = (value: unknown, from: RecordValue[]) => {
        const k = valueKey(value);
        const f = found.get(k);
        if (f) f.from.push(...from);
        else found.set(k, { value, from: [...from] });
      };
      for (const s of arg.sources ?? []) {
        if (isRecordSource(s) && s.with !== undefined) {
          const of = bound.origins[s.with] ?? [];
          for (const r of recordsOf(s)) {
            if (of.some((o) => sameRecord(o, r))) add(r.value, [r]);
          }
        } else if (anchor && isRecordSource(s)) {
          for (const r of recordsOf(s)) add(r.value, [r]);
        } else {
          for (const v of candidatesOf(s, state, bound.values)) add(v, []);
        }
      }
      for (const { value, from } of found.values()) {
        next.push({
          values: { ...bound.values, [arg.path]: value },
          origins: anchor
            ? { ...bound.origins, [arg.path]: from }
            : bound.origins,
        });
        if (next.length > cap) return null;
      }
    }
    partial = next;
  }
  return partial.map((p) => p.values);
}
