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

/** How every {@linkcode codeClassOf} class begins. */
const CODE_CLASS = "[A9]";

/**
 * The class of a code of capitals and digits, five characters or more and
 * at least one capital (`[A9]{6}` for `ABC123`, `8JX2WO` and `HATHAT`), or
 * null: reservation ids come in many {@linkcode shapeOf} shapes, and a
 * training split sees only some of them.
 *
 * @param word A word.
 * @returns The class, or null.
 *
 * @example
 * ```ts
 * import { codeClassOf } from "./user_words.ts";
 * import { strictEqual } from "node:assert/strict";
 * strictEqual(codeClassOf("8JX2WO"), "[A9]{6}");
 * strictEqual(codeClassOf("JFK"), null);
 * strictEqual(codeClassOf("123456"), null);
 * ```
 */
export function codeClassOf(word: string): string | null {
  return /^[A-Z0-9]{5,}$/.test(word) && /[A-Z]/.test(word)
    ? `${CODE_CLASS}{${word.length}}`
    : null;
}

/** A word and its shape, for {@linkcode fitsShape}. */
export interface WordShape {
  /** The word. */
  word: string;
  /** Its {@linkcode shapeOf}. */
  shape: string;
}

/**
 * Whether a word has a source's shape: the same {@linkcode shapeOf}, or
 * the same {@linkcode codeClassOf} for a class.
 *
 * @param shape The source's shape or class.
 * @param candidate The word and its shape.
 * @returns True when it fits.
 */
export function fitsShape(
  shape: string,
  candidate: WordShape,
): boolean {
  const { word, shape: wordShape } = candidate;
  return shape.startsWith(CODE_CLASS)
    ? codeClassOf(word) === shape
    : wordShape === shape;
}

/**
 * Messages already cut into words, by text: one per compile, so that the
 * many replays of the same training episodes cut each message once. Its
 * values are shared; nobody changes them.
 */
export type WordsMemo = Map<string, MessageWords>;

/**
 * The words of a user message for {@linkcode ConversationState.userWords}.
 *
 * @param text The message.
 * @param memo Messages already cut (looked up, then filled).
 * @returns Its words, and its words followed by its other tokens.
 */
export function wordsOfMessage(text: string, memo?: WordsMemo): MessageWords {
  const hit = memo?.get(text);
  if (hit) return hit;
  const ws = words(text).map((w) => w.text);
  const all = userWords(text);
  const out = {
    words: ws,
    all,
    wordShapes: ws.map(shapeOf),
    allShapes: all.map(shapeOf),
  };
  memo?.set(text, out);
  return out;
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
