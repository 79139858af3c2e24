/**
 * What a package says of its tools' effects: the manifest's tool → effect
 * map ({@linkcode Effects}), where each effect came from
 * ({@linkcode EffectSource}), and the one question both forms ask of it at
 * run time ({@linkcode changesState}). How a compilation finds the effects
 * is the compiler's (`lib/compiler/effects.ts`).
 *
 * @module
 */

/** Tool → effect: `read`, `write`, `destructive` (unknown tools count as `write`). */
export type Effects = Record<string, string>;

/** Where a tool's effect came from. */
export type EffectSource =
  | "override"
  | "annotation"
  | "schema"
  | "domain"
  | "host"
  | "inferred"
  | "unknown";

/** Where a tool's effect came from, most trusted first. */
export const EFFECT_SOURCES: readonly EffectSource[] = [
  "override",
  "annotation",
  "schema",
  "domain",
  "host",
  "inferred",
  "unknown",
];

/**
 * Whether a tool changes state.
 *
 * @param effects The effects map.
 * @param tool Logical tool.
 * @returns True unless the map says `read`.
 */
export function changesState(effects: Effects, tool: string): boolean {
  return (effects[tool] ?? "write") !== "read";
}
