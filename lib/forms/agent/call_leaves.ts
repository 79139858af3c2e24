/**
 * Leaves of a call, as binding sources read them: every primitive leaf of
 * its result with a generalized path (list indices and data-like keys as
 * `*`), and every leaf of its arguments with its concrete path.
 *
 * @module
 */
import type { GeneralPath } from "../../package/source.ts";

/**
 * Leaves of result objects already walked, by object (results are never
 * changed): a compile's builds and replays share one, an engine keeps its
 * own.
 */
export type LeafMemo = WeakMap<object, Leaf[]>;

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
 * import { generalLeaves } from "./call_leaves.ts";
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
