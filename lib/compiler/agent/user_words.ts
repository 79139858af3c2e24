/**
 * User messages cut into words, and the shape of a word.
 *
 * @module
 */
import { tokenize, words } from "../../lineage/meaningful.ts";

/**
 * The shape of a word: runs of capitals `A`, small letters `a` and digits
 * `9`, other characters kept; a word of digits only keeps its length
 * (`9{5}` for a ZIP code).
 *
 * @param word A word.
 * @returns Its shape.
 *
 * @example
 * ```ts
 * import { shapeOf } from "./user_words.ts";
 * import { strictEqual } from "node:assert/strict";
 * strictEqual(shapeOf("Santos"), "Aa");
 * strictEqual(shapeOf("98157"), "9{5}");
 * strictEqual(shapeOf("raj.santos@example.com"), "a.a@a.a");
 * strictEqual(shapeOf("#W2378156"), "#A9");
 * ```
 */
export function shapeOf(word: string): string {
  if (/^\d+$/.test(word)) return `9{${word.length}}`;
  return word.replace(/[A-Z]+/g, "A").replace(/[a-z]+/g, "a").replace(
    /[0-9]+/g,
    "9",
  );
}

/**
 * The words of a user message for {@linkcode ConversationState.userWords}.
 *
 * @param text The message.
 * @returns Its words, and its words followed by its other tokens.
 */
export function wordsOfMessage(text: string): MessageWords {
  const ws = words(text).map((w) => w.text);
  const all = userWords(text);
  return {
    words: ws,
    all,
    wordShapes: ws.map(shapeOf),
    allShapes: all.map(shapeOf),
  };
}

/** A user message cut into words, with their shapes. */
export interface MessageWords {
  /** Its words. */
  words: string[];
  /** Its words, then its other tokens. */
  all: string[];
  /** Shape of each word. */
  wordShapes: string[];
  /** Shape of each of `all`. */
  allShapes: string[];
}

/** The words of one user message, in order, with tokens that are not words. */
export function userWords(text: string): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const w of words(text)) {
    out.push(w.text);
    seen.add(w.text);
  }
  for (const t of tokenize(text)) {
    if (!seen.has(t.text)) out.push(t.text);
  }
  return out;
}
