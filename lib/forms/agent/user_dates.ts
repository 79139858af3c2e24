/**
 * Dates the user writes in words ("May 20", "May 20th", "20 May", "the 2nd
 * of June", "5/20", the end of "May 20–25"), read as the ISO dates tool
 * calls take, in the year a `user_date` source learned from training.
 *
 * @module
 */

/** Month names, January first. */
export const MONTHS: readonly string[] = [
  "january",
  "february",
  "march",
  "april",
  "may",
  "june",
  "july",
  "august",
  "september",
  "october",
  "november",
  "december",
];

const MONTH = `(${MONTHS.map((m) => `${m}|${m.slice(0, 3)}\\.?`).join("|")})`;
const DAY = `(\\d{1,2})(?:st|nd|rd|th)?`;

/** Month-day, day-month, and numeric month/day forms, in that order. */
const FORMS: { re: RegExp; month: number; day: number }[] = [
  {
    re: new RegExp(
      `(?<![a-z])${MONTH}\\s+(?:\\d{1,2}\\s*[–-]\\s*)?${DAY}(?![0-9])`,
      "gi",
    ),
    month: 1,
    day: 2,
  },
  {
    re: new RegExp(`(?<![0-9])${DAY}\\s+(?:of\\s+)?${MONTH}(?![a-z])`, "gi"),
    month: 2,
    day: 1,
  },
  {
    re: /(?<![0-9/])(\d{1,2})\/(\d{1,2})(?![0-9/])/g,
    month: 1,
    day: 2,
  },
];

function monthOf(text: string): number {
  const t = text.toLowerCase().replace(".", "");
  if (/^\d+$/.test(t)) return Number(t);
  return MONTHS.findIndex((m) => m === t || m.slice(0, 3) === t) + 1;
}

function iso(year: number, month: number, day: number): string | null {
  if (month < 1 || month > 12 || day < 1) return null;
  const d = new Date(Date.UTC(year, month - 1, day));
  if (d.getUTCMonth() !== month - 1) return null;
  return d.toISOString().slice(0, 10);
}

/**
 * The dates a text writes in words, as ISO dates of a year, in the order
 * they stand (each once).
 *
 * @param text A user message.
 * @param year The year to read them in.
 * @returns ISO dates.
 *
 * @example
 * ```ts
 * import { datesInWords } from "./user_dates.ts";
 * import { deepStrictEqual } from "node:assert/strict";
 * deepStrictEqual(
 *   datesInWords("Fly May 20th, back the 2nd of June (or 6/3).", 2024),
 *   ["2024-05-20", "2024-06-02", "2024-06-03"],
 * );
 * ```
 */
export function datesInWords(text: string, year: number): string[] {
  const found: { at: number; date: string }[] = [];
  for (const f of FORMS) {
    for (const m of text.matchAll(f.re)) {
      const date = iso(year, monthOf(m[f.month]), Number(m[f.day]));
      if (date) found.push({ at: m.index, date });
    }
  }
  found.sort((a, b) => a.at - b.at);
  return [...new Set(found.map((f) => f.date))];
}

/**
 * The year of an ISO date a user may have written in words, or null when
 * the value is no ISO date.
 *
 * @param value An argument value.
 * @returns Its year, or null.
 */
export function isoYear(value: unknown): number | null {
  return typeof value === "string" && /^\d{4}-\d{2}-\d{2}$/.test(value)
    ? Number(value.slice(0, 4))
    : null;
}
