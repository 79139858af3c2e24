/**
 * The candidate argument tuples of a lookup node in a conversation: the
 * product of each argument's candidates, in order, with an argument bound
 * `after` another narrowed by the value chosen for it.
 *
 * @module
 */
import type { IrNode } from "../core/ir.ts";
import { candidatesOf, type ConversationState, valueKey } from "./sources.ts";

type LookupNode = Extract<IrNode, { kind: "lookup" }>;

/**
 * Every candidate tuple of a lookup node, or null when there are more than
 * `limit`.
 *
 * @param node The lookup node.
 * @param state The conversation so far.
 * @param limit Most tuples wanted.
 * @returns The tuples in order, or null past the limit.
 */
export function lookupTuples(
  node: LookupNode,
  state: ConversationState,
  limit: number,
): Record<string, unknown>[] | null {
  let partial: Record<string, unknown>[] = [{}];
  // Partial tuples may be many (every capitalized word for a first name)
  // before a later argument (`after` it) narrows them; only the final set
  // is held to the limit.
  const partialLimit = Math.max(limit, 256);
  for (const [i, arg] of node.args.entries()) {
    const cap = i === node.args.length - 1 ? limit : partialLimit;
    const next: Record<string, unknown>[] = [];
    for (const bound of partial) {
      const seen = new Set<string>();
      for (const s of arg.sources ?? []) {
        for (const v of candidatesOf(s, state, bound)) {
          const k = valueKey(v);
          if (seen.has(k)) continue;
          seen.add(k);
          next.push({ ...bound, [arg.path]: v });
          if (next.length > cap) return null;
        }
      }
    }
    partial = next;
  }
  return partial;
}
