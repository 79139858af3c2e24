/**
 * The ids closest to one that was not found, for an error that says what
 * the user probably meant: ids the typed one is a prefix of (a truncated
 * `gw_…` id) or that are a prefix of it come first, then ids within a small
 * edit distance (a typo), nearest first. Pure.
 *
 * @module
 */

/** Options of {@linkcode closestIds}. */
export interface ClosestOptions {
  /** At most this many ids. @default 3 */
  max?: number;
}

/**
 * Levenshtein distance, stopping early once it exceeds `limit`.
 *
 * @param a One string.
 * @param b The other.
 * @param limit Beyond this the exact figure does not matter.
 * @returns The distance, or `limit + 1` when it is larger than `limit`.
 */
export function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const v = Math.min(
        prev[j] + 1,
        row[j - 1] + 1,
        prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
      row.push(v);
      if (v < best) best = v;
    }
    if (best > limit) return limit + 1;
    prev = row;
  }
  return prev[b.length];
}

/**
 * The known ids closest to `wanted`: prefix matches first (shortest
 * first), then those within an edit distance of a third of its length (at
 * least 2), nearest first; ties by id. Empty when none is close.
 *
 * @param wanted The id that was not found.
 * @param known The ids there are.
 * @param options How many.
 * @returns Up to `max` ids.
 */
export function closestIds(
  wanted: string,
  known: Iterable<string>,
  options: ClosestOptions = {},
): string[] {
  const max = options.max ?? 3;
  const limit = Math.max(2, Math.floor(wanted.length / 3));
  const scored: { id: string; rank: number }[] = [];
  for (const id of known) {
    if (id === wanted) continue;
    if (id.startsWith(wanted) || wanted.startsWith(id)) {
      // Prefix matches rank before any typo, shorter gaps first.
      scored.push({ id, rank: -1 / (1 + Math.abs(id.length - wanted.length)) });
      continue;
    }
    const d = editDistance(wanted, id, limit);
    if (d <= limit) scored.push({ id, rank: d });
  }
  scored.sort((x, y) => x.rank - y.rank || (x.id < y.id ? -1 : 1));
  return scored.slice(0, max).map((s) => s.id);
}
