/**
 * Exact-lineage search: where in the state a value came from.
 *
 * Only exact equality counts (primitives by `===`, objects and lists by
 * canonical JSON). Inside strings the search also sees JSON text (`~json`)
 * and identifier tokens (`~token[i]`). A list index equal to an integer
 * state variable is also emitted symbolically (`orders[$selected_index]`).
 * Paths are ordered best-first: symbolic-index paths, then the rest; among
 * those, structural paths before positions in text (`~token`, `~word`);
 * then shorter; then by text.
 *
 * @module
 */
import { canonicalJson } from "../trace/canonical_json.ts";
import { isIdentifierToken, tokenize, words } from "./meaningful.ts";
import { formatPath, type PathSegment } from "./paths.ts";

/** Options of the search. */
export interface FindSourceOptions {
  /**
   * How many levels below a top-level key the search descends.
   * @default 6
   */
  maxDepth?: number;
}

/** Default search depth. */
export const DEFAULT_MAX_DEPTH = 6;

/**
 * Visit every value under a root, with its path.
 *
 * @param at The value, its path (segments so far) and the levels left.
 * @param visit Called with each value (leaves, containers, JSON and tokens).
 */
function walk(
  at: { value: unknown; path: PathSegment[]; depth: number },
  visit: (value: unknown, path: PathSegment[]) => void,
): void {
  const { value, path, depth } = at;
  visit(value, path);
  if (typeof value === "string") {
    const t = value.trimStart();
    if ((t.startsWith("{") || t.startsWith("[")) && depth > 0) {
      try {
        const parsed = JSON.parse(value);
        if (typeof parsed === "object" && parsed !== null) {
          walk(
            {
              value: parsed,
              path: [...path, { json: true }],
              depth: depth - 1,
            },
            visit,
          );
        }
      } catch { /* not JSON */ }
    }
    const seen = new Set<string>([value]);
    for (const w of words(value)) {
      if (!seen.has(w.text) && isIdentifierToken(w.text)) {
        seen.add(w.text);
        visit(w.text, [...path, { word: w.index }]);
      }
    }
    for (const tok of tokenize(value)) {
      if (!seen.has(tok.text) && isIdentifierToken(tok.text)) {
        seen.add(tok.text);
        visit(tok.text, [...path, { token: tok.index }]);
      }
    }
    return;
  }
  if (depth <= 0 || typeof value !== "object" || value === null) return;
  if (Array.isArray(value)) {
    value.forEach((v, i) =>
      walk({ value: v, path: [...path, { index: i }], depth: depth - 1 }, visit)
    );
  } else {
    for (const [k, v] of Object.entries(value)) {
      walk({ value: v, path: [...path, { key: k }], depth: depth - 1 }, visit);
    }
  }
}

/** Integer state variables: top-level keys holding a non-negative integer. */
export function stateVariables(
  state: Record<string, unknown>,
): Map<number, string[]> {
  const vars = new Map<number, string[]>();
  for (const [k, v] of Object.entries(state)) {
    if (typeof v === "number" && Number.isInteger(v) && v >= 0) {
      const list = vars.get(v) ?? [];
      list.push(k);
      vars.set(v, list);
    }
  }
  return vars;
}

/**
 * Symbolic variants of a path: each `[i]` whose i equals a state variable
 * may be written `[$var]`.
 *
 * @param segments Path segments.
 * @param vars Variables by value.
 * @returns The symbolic paths (none when no index matches).
 */
export function symbolicVariants(
  segments: PathSegment[],
  vars: Map<number, string[]>,
): PathSegment[][] {
  let variants: PathSegment[][] = [[]];
  let any = false;
  for (const s of segments) {
    const names = "index" in s ? vars.get(s.index) : undefined;
    if (names && names.length) {
      any = true;
      variants = variants.flatMap((v) => [
        [...v, s],
        ...names.map((n) => [...v, { variable: n }]),
      ]);
    } else variants = variants.map((v) => [...v, s]);
  }
  return any ? variants.filter((v) => v.some((s) => "variable" in s)) : [];
}

/**
 * Best-first order of paths: symbolic-index paths first, structural before
 * text positions, then shorter, then by text.
 *
 * @param a A path.
 * @param b Another path.
 * @returns Sort order.
 */
export function comparePaths(a: string, b: string): number {
  const sa = a.includes("[$") ? 0 : 1;
  const sb = b.includes("[$") ? 0 : 1;
  if (sa !== sb) return sa - sb;
  // A structural path (keys, indices, JSON) says more than a text position.
  const ta = /~(token|word|span)\[/.test(a) ? 1 : 0;
  const tb = /~(token|word|span)\[/.test(b) ? 1 : 0;
  if (ta !== tb) return ta - tb;
  if (a.length !== b.length) return a.length - b.length;
  return a < b ? -1 : a > b ? 1 : 0;
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (
    typeof a !== "object" || typeof b !== "object" || a === null || b === null
  ) {
    return false;
  }
  return canonicalJson(a) === canonicalJson(b);
}

/**
 * Every path in the state whose value equals the given value exactly.
 *
 * @param value The value to find.
 * @param state Top-level stores and variables.
 * @param options Search depth.
 * @returns Paths, best first.
 */
export function findAllSources(
  value: unknown,
  state: Record<string, unknown>,
  options: FindSourceOptions = {},
): string[] {
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  const vars = stateVariables(state);
  const found = new Set<string>();
  for (const [key, root] of Object.entries(state)) {
    walk({ value: root, path: [{ key }], depth: maxDepth }, (v, path) => {
      if (path.length === 1 && vars.has(v as number) && typeof v === "number") {
        return; // a variable is not a source of its own value
      }
      if (!sameValue(v, value)) return;
      found.add(formatPath(path));
      for (const sym of symbolicVariants(path, vars)) {
        found.add(formatPath(sym));
      }
    });
  }
  return [...found].sort(comparePaths);
}

/**
 * The best path whose value equals the given value exactly.
 *
 * @param value The value to find.
 * @param state Top-level stores and variables.
 * @param options Search depth.
 * @returns The path, or null.
 *
 * @example
 * ```ts
 * import { findSource } from "./find_source.ts";
 * const state = { selected_index: 1, orders: [{ id: "O-1" }, { id: "O-2" }] };
 * import { strictEqual } from "node:assert/strict";
 * strictEqual(findSource("O-2", state), "orders[$selected_index].id");
 * ```
 */
export function findSource(
  value: unknown,
  state: Record<string, unknown>,
  options: FindSourceOptions = {},
): string | null {
  return findAllSources(value, state, options)[0] ?? null;
}
