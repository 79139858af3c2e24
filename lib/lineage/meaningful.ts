/**
 * Which values lineage attributes, and how text is cut into tokens.
 *
 * - **Meaningful** (identifier-like): a string of 2 to 512 characters with
 *   no whitespace; a non-integer finite number; an integer whose absolute
 *   value is at least {@linkcode SMALL_INT_LIMIT}. Never booleans, null,
 *   small integers (counts, flags, indices) or prose.
 * - **Tokens** (`~token[i]`): maximal runs of `A-Z a-z 0-9 _ -` in a string.
 *   `cat invoices/INV-2210.txt` has the tokens `cat`, `invoices`,
 *   `INV-2210`, `txt`, so `INV-2210` matches a value `INV-2210` but `INV-22`
 *   never does.
 * - **Words** (`~word[i]`): maximal runs of characters other than
 *   whitespace and `, ; | " ' \` ( ) [ ] { } < >`, with leading and
 *   trailing `: ! ? .` stripped — so `U-981,Ana Lima,ana@example.com` gives
 *   `U-981`, `Ana`, `Lima`, `ana@example.com`.
 * Both are attributed only as wholes, and only when identifier-like
 * (meaningful, with at least one digit or one of `_ - @ . / :`; a token of
 * digits only follows the integer rule, so `42` in text is not attributed).
 *
 * @module
 */

/** Integers with a smaller absolute value are never attributed. */
export const SMALL_INT_LIMIT = 1000;

/** Longest string attributed as a whole value. */
export const MAX_MEANINGFUL_LENGTH = 512;

/** Shortest string attributed. */
export const MIN_STRING_LENGTH = 2;

/**
 * Whether lineage attributes this value.
 *
 * @param value Any value.
 * @returns True for identifier-like values.
 *
 * @example
 * ```ts
 * import { isMeaningful } from "./meaningful.ts";
 * import { ok } from "node:assert/strict";
 * ok(isMeaningful("U-1042") && !isMeaningful(true) && !isMeaningful(3));
 * ```
 */
export function isMeaningful(value: unknown): boolean {
  if (typeof value === "string") {
    return value.length >= MIN_STRING_LENGTH &&
      value.length <= MAX_MEANINGFUL_LENGTH && !/\s/.test(value);
  }
  if (typeof value === "number") {
    if (!Number.isFinite(value)) return false;
    return !Number.isInteger(value) || Math.abs(value) >= SMALL_INT_LIMIT;
  }
  return false;
}

const TOKEN = /[A-Za-z0-9_-]+/g;

/** A token of a string and where it stands. */
export interface Token {
  /** The token text. */
  text: string;
  /** Its index among the string's tokens. */
  index: number;
  /** Offset of its first character. */
  start: number;
}

/**
 * The tokens of a string.
 *
 * @param text Any string.
 * @returns Its tokens in order.
 */
export function tokenize(text: string): Token[] {
  const out: Token[] = [];
  TOKEN.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = TOKEN.exec(text)) !== null) {
    out.push({ text: m[0], index: out.length, start: m.index });
  }
  return out;
}

const WORD = /[^\s,;|"'`()[\]{}<>]+/g;
const EDGE_LEAD = /^[:!?.]+/;
const EDGE_TAIL = /[:!?.]+$/;

/**
 * The words of a string (see the module notes).
 *
 * @param text Any string.
 * @returns Its words in order, with offsets.
 */
export function words(text: string): Token[] {
  const out: Token[] = [];
  WORD.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = WORD.exec(text)) !== null) {
    const lead = EDGE_LEAD.exec(m[0])?.[0].length ?? 0;
    const core = m[0].slice(lead).replace(EDGE_TAIL, "");
    if (core) {
      out.push({ text: core, index: out.length, start: m.index + lead });
    }
  }
  return out;
}

/**
 * Whether a token is worth attributing: meaningful, and not all letters
 * (plain words such as `cat` or `txt` are not identifiers).
 *
 * @param token Token text.
 * @returns True for identifier-like tokens.
 */
export function isIdentifierToken(token: string): boolean {
  if (/^-?\d+$/.test(token)) return isMeaningful(Number(token)); // numbers follow the number rule
  return isMeaningful(token) && /[0-9_\-@./:]/.test(token);
}

/**
 * Whether a word or token of a source text may be the source of a whole
 * argument: an identifier token, or a number of three digits or more
 * written in text (`420` in `3:ORD-7731,420,pending`: a datum, where a
 * bare small integer in structured data is a count or a flag).
 *
 * @param token Token text.
 * @returns True when it is indexed as a source.
 */
export function isTextDatum(token: string): boolean {
  return isIdentifierToken(token) ||
    (/^-?\d+$/.test(token) && token.replace("-", "").length >= 3);
}

/**
 * Parts of a hyphen- or underscore-joined token that are identifiers of
 * their own (`ORD-7731` and `7731` in `shipped-ORD-7731`), with their
 * offsets in the text; the whole token is not repeated.
 *
 * @param text Any string.
 * @returns The parts, at most 8 pieces per token considered.
 *
 * @example
 * ```ts
 * import { subTokens } from "./meaningful.ts";
 * import { ok } from "node:assert/strict";
 * const parts = subTokens("shipped-ORD-7731.txt").map((t) => t.text);
 * ok(parts.includes("ORD-7731") && !parts.includes("shipped-ORD-7731"));
 * ```
 */
export function subTokens(text: string): { text: string; start: number }[] {
  const out: { text: string; start: number }[] = [];
  for (const t of tokenize(text)) {
    if (!/[-_]/.test(t.text)) continue;
    const pieces: { start: number; end: number }[] = [];
    const re = /[A-Za-z0-9]+/g;
    let m: RegExpExecArray | null;
    while ((m = re.exec(t.text)) !== null) {
      pieces.push({ start: m.index, end: m.index + m[0].length });
    }
    if (pieces.length < 2 || pieces.length > 8) continue;
    for (let i = 0; i < pieces.length; i++) {
      for (let j = i; j < pieces.length; j++) {
        if (i === 0 && j === pieces.length - 1) continue;
        const sub = t.text.slice(pieces[i].start, pieces[j].end);
        if (
          isIdentifierToken(sub) && /[-_]/.test(sub) ||
          /\d/.test(sub) && isTextDatum(sub)
        ) {
          out.push({ text: sub, start: t.start + pieces[i].start });
        }
      }
    }
  }
  return out;
}
