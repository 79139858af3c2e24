/**
 * Which conversations a package applies to when it is served at the model
 * API (`serve --package`): the rule {@linkcode openingRule} derives from
 * what its training sessions opened with (the user's first message, the
 * text a host adds left out), stored in the package (`applies_to`), shown
 * by `compile explain`, and checked on each request's opening by the
 * gateway drivers ({@linkcode openingMisfit}). Deterministic: the same
 * openings give the same rule.
 *
 * - Every training session opened with the same text (whitespace aside):
 *   `same_text`, the conversation must open with it.
 * - They differ but have the same number of words, some of them the same
 *   in every session: `word_template`, the conversation must open with as
 *   many words, the same ones where every session had the same.
 * - Otherwise (openings of any length, or no opening text recorded):
 *   `any`, with why; the package applies wherever its tools fit, as
 *   before this rule existed.
 *
 * @module
 */

/** Which conversations a served package applies to. */
export type AppliesTo =
  | {
    /** Every training session opened with this text. */
    opening: "same_text";
    /** The text, whitespace collapsed. */
    text: string;
    /** Training sessions it comes from. */
    sessions: number;
  }
  | {
    /** The openings differ, word for word in some places only. */
    opening: "word_template";
    /** Each word: the one every session had there, or null (any word). */
    words: (string | null)[];
    /** Training sessions it comes from. */
    sessions: number;
  }
  | {
    /** No rule from the openings: wherever the package's tools fit. */
    opening: "any";
    /** Why. */
    why: string;
    /** Training sessions it comes from. */
    sessions: number;
  };

/**
 * An opening as the rule compares it: whitespace collapsed, trimmed.
 *
 * @param text The user's first message.
 * @returns The normalized text.
 */
export function normalizeOpening(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/**
 * The rule from the training sessions' openings.
 *
 * @param openings Each training session's first user message (null: the
 *   session recorded none).
 * @returns The rule.
 *
 * @example
 * ```ts
 * import { openingRule } from "./applies_to.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 * deepStrictEqual(openingRule(["Do  it.", "Do it."]), {
 *   opening: "same_text",
 *   text: "Do it.",
 *   sessions: 2,
 * });
 * deepStrictEqual(openingRule(["Ship ORD-1 now", "Ship ORD-2 now"]).opening, "word_template");
 * ```
 */
export function openingRule(openings: (string | null)[]): AppliesTo {
  const sessions = openings.length;
  const texts = openings.map((t) =>
    typeof t === "string" ? normalizeOpening(t) : ""
  );
  if (sessions === 0 || texts.some((t) => t === "")) {
    return {
      opening: "any",
      why: sessions === 0
        ? "no training session"
        : "a training session has no opening text",
      sessions,
    };
  }
  if (texts.every((t) => t === texts[0])) {
    return { opening: "same_text", text: texts[0], sessions };
  }
  const split = texts.map((t) => t.split(" "));
  const n = split[0].length;
  if (split.some((w) => w.length !== n)) {
    return {
      opening: "any",
      why: "the training sessions opened with texts of different lengths",
      sessions,
    };
  }
  const words = split[0].map((w, i) =>
    split.every((s) => s[i] === w) ? w : null
  );
  if (words.every((w) => w === null)) {
    return {
      opening: "any",
      why: "no word is the same in every training session's opening",
      sessions,
    };
  }
  return { opening: "word_template", words, sessions };
}

/**
 * A conversation's opening: its first user message's text (the text a
 * host adds, such as Claude Code's `<system-reminder>` blocks, is left out
 * by the wire readers), or null when it has none.
 *
 * @param messages The conversation's messages, in order.
 * @returns The text.
 */
export function openingOf(
  messages: readonly { role: string; text: string }[],
): string | null {
  const first = messages.find((m) => m.role === "user" && m.text !== "");
  return first ? first.text : null;
}

/**
 * Whether a conversation's opening fits the rule, or why not.
 *
 * @param rule The package's rule (absent: packages made before it, which apply anywhere).
 * @param opening The conversation's first user message (null: none).
 * @returns null when it fits, else the reason (said with the request passed through).
 */
export function openingMisfit(
  rule: AppliesTo | undefined,
  opening: string | null,
): string | null {
  if (!rule || rule.opening === "any") return null;
  if (opening === null) {
    return "the conversation has no user message to match the training sessions' opening";
  }
  const text = normalizeOpening(opening);
  if (rule.opening === "same_text") {
    return text === rule.text
      ? null
      : `the conversation does not open as the ${rule.sessions} training sessions did (${
        JSON.stringify(clip(rule.text))
      })`;
  }
  const words = text.split(" ");
  const fits = words.length === rule.words.length &&
    rule.words.every((w, i) => w === null || w === words[i]);
  return fits
    ? null
    : `the conversation does not open as the ${rule.sessions} training sessions did (${
      JSON.stringify(clip(templateText(rule.words)))
    })`;
}

function templateText(words: (string | null)[]): string {
  return words.map((w) => w ?? "…").join(" ");
}

function clip(text: string): string {
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

/**
 * The rule in a user's words (`compile explain`).
 *
 * @param rule The rule (absent: a package made before it).
 * @returns One sentence.
 */
export function describeAppliesTo(rule: AppliesTo | undefined): string {
  if (!rule) {
    return "any conversation its tools fit (the package predates the opening rule)";
  }
  const n = `${rule.sessions} training session${
    rule.sessions === 1 ? "" : "s"
  }`;
  switch (rule.opening) {
    case "same_text":
      return `conversations that open with ${
        JSON.stringify(rule.text)
      } (what all ${n} opened with; whitespace aside)`;
    case "word_template":
      return `conversations that open with ${rule.words.length} words, as ${
        JSON.stringify(templateText(rule.words))
      } (… a word that differed between the ${n})`;
    case "any":
      return `any conversation its tools fit (${rule.why})`;
  }
}

/**
 * What would make a package that is not servable servable (said by
 * `compile` when it marks one, and by `serve --package` when it refuses
 * one).
 *
 * @returns One sentence.
 */
export function servableRemedy(): string {
  return "compile it again from sessions its replay reproduces: mark the sessions that did the task (ingest.ts capture outcome <capture> <episode> --success; the tree form learns from those), say which tools only read (--effects FILE), leave out sessions of other tasks, or record more sessions of the task; compile explain lists the replay's problems";
}
