/**
 * Values users say in their own words: an enum value with its underscores
 * spoken as spaces (`basic_economy` → "basic economy"), a small count as a
 * word (`2` → "two"). A `user_word` source keeps the table of values
 * training saw said that way; a value is a candidate when the user said it.
 *
 * @module
 */

/** Numbers 0–10 as words. */
export const NUMBER_WORDS: readonly string[] = [
  "zero",
  "one",
  "two",
  "three",
  "four",
  "five",
  "six",
  "seven",
  "eight",
  "nine",
  "ten",
];

/**
 * The ways a user says a value other than as written: none for a value
 * the user would type as is.
 *
 * @param value An argument value.
 * @returns Lowercase phrases.
 *
 * @example
 * ```ts
 * import { spokenForms } from "./user_phrases.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 * deepStrictEqual(spokenForms("basic_economy"), ["basic economy"]);
 * deepStrictEqual(spokenForms(2), ["two"]);
 * deepStrictEqual(spokenForms("economy"), []);
 * ```
 */
export function spokenForms(value: unknown): string[] {
  if (typeof value === "number" && Number.isInteger(value)) {
    return NUMBER_WORDS[value] ? [NUMBER_WORDS[value]] : [];
  }
  if (typeof value === "string" && /^[a-z]+(?:_[a-z]+)+$/.test(value)) {
    return [value.replaceAll("_", " ")];
  }
  return [];
}

/**
 * Whether a user message says a value in one of its spoken forms (whole
 * words, any case).
 *
 * @param value An argument value.
 * @param text A user message.
 * @returns True when it does.
 */
export function saysValue(value: unknown, text: string): boolean {
  const lower = text.toLowerCase();
  return spokenForms(value).some((p) =>
    new RegExp(`(?<![a-z])${p}(?![a-z])`).test(lower)
  );
}
