/**
 * "Did you mean …?": the known word closest to a mistyped one, when it is
 * close enough to be the word meant (a typo, a dropped or doubled letter,
 * two letters swapped, or an unambiguous start of it).
 *
 * @module
 */

/**
 * The word of `known` that `given` most likely meant, or null.
 *
 * @param given What was typed (`pakage`).
 * @param known The words it could mean (`["package", "port"]`).
 * @returns The closest, when its edit distance is at most a third of its
 *   length (at least 1), or `given` starts exactly one of them; else null.
 *
 * @example
 * ```ts
 * import { closestWord } from "./did_you_mean.ts";
 * import { equal } from "node:assert/strict";
 * equal(closestWord("pakage", ["package", "port", "trust"]), "package");
 * equal(closestWord("upstream-opena", ["upstream-openai", "upstream-anthropic"]), "upstream-openai");
 * equal(closestWord("xyz", ["package", "port"]), null);
 * ```
 */
export function closestWord(given: string, known: string[]): string | null {
  const starts = known.filter((k) => k.startsWith(given));
  if (given.length >= 3 && starts.length === 1) return starts[0];
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const k of known) {
    const d = editDistance(given, k);
    if (d < bestDistance) [best, bestDistance] = [k, d];
  }
  if (best === null) return null;
  return bestDistance <= Math.max(1, Math.floor(best.length / 3)) ? best : null;
}

/** Optimal string alignment distance (Levenshtein with swaps). */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from(
    { length: a.length + 1 },
    (_, i) => [i, ...Array<number>(b.length).fill(0)],
  );
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(
        d[i - 1][j] + 1,
        d[i][j - 1] + 1,
        d[i - 1][j - 1] + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.length][b.length];
}
