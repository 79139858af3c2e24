/**
 * Where an argument value comes from, judged against the state before its
 * call (a normalized step's `state_before`: the user's messages so far and
 * every earlier result). An analysis aid for `bench/arg_sources.ts` and for
 * the sources still to build (docs/evaluation.md, "Where airline's
 * arguments come from"); the compiler does not use it to bind anything.
 *
 * @module
 */
import type { NormStep } from "../lib/lineage/records.ts";
import { MONTHS } from "../lib/forms/agent/user_dates.ts";
import { NUMBER_WORDS } from "../lib/forms/agent/user_phrases.ts";

/** Classes of an argument value, in the order they are tried. */
export const CLASSES = [
  "result",
  "result_item",
  "user",
  "user_case",
  "user_date",
  "user_relative",
  "user_city",
  "user_word",
  "user_count",
  "computed",
  "text",
  "none",
] as const;

/** The class of one argument value. */
export type SourceClass = typeof CLASSES[number];

/** Classes the compiler binds today. */
export const HAVE: ReadonlySet<SourceClass> = new Set([
  "result",
  "result_item",
  "user",
]);

function leaves(
  v: unknown,
  path: string,
  out: [string, unknown][],
): [string, unknown][] {
  if (Array.isArray(v)) v.forEach((x, i) => leaves(x, `${path}[${i}]`, out));
  else if (v !== null && typeof v === "object") {
    for (const [k, x] of Object.entries(v)) {
      leaves(x, path ? `${path}.${k}` : k, out);
    }
  } else if (v !== null && v !== undefined) out.push([path, v]);
  return out;
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function hasToken(text: string, token: string, flags = ""): boolean {
  return new RegExp(`(?<![A-Za-z0-9])${escape(token)}(?![A-Za-z0-9])`, flags)
    .test(text);
}

/** ISO date → the ways a user writes it (month and day, no year needed). */
function dateForms(iso: string): RegExp[] {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(iso);
  if (!m) return [];
  const month = MONTHS[Number(m[2]) - 1];
  const day = String(Number(m[3]));
  if (!month) return [];
  const mon = `(?:${month}|${month.slice(0, 3)}\\.?)`;
  const d = `${day}(?:st|nd|rd|th)?`;
  return [
    new RegExp(`(?<![a-z])${mon}\\s+${d}(?![0-9])`, "i"),
    new RegExp(`(?<![a-z])${mon}\\s+\\d{1,2}\\s*[–-]\\s*${d}(?![0-9])`, "i"),
    new RegExp(`(?<![0-9])${d}\\s+(?:of\\s+)?${mon}(?![a-z])`, "i"),
    new RegExp(`(?<![0-9/])0?${Number(m[2])}/0?${day}(?![0-9])`),
  ];
}

/** Earlier results' scalar values, and the city table they give. */
/** Scalar values of earlier results. */
export interface Known {
  /** Strings. */
  strings: Set<string>;
  /** Numbers in cents. */
  numbers: number[];
  /** The same, as a set. */
  numberSet: Set<number>;
  /** Values found only as items of lists of several. */
  itemOnly: Set<string>;
}

/** Scalar leaves with whether a list of several items holds them. */
function placed(
  v: unknown,
  inList: boolean,
  out: [unknown, boolean][],
): [unknown, boolean][] {
  if (Array.isArray(v)) {
    for (const x of v) placed(x, inList || v.length > 1, out);
  } else if (v !== null && typeof v === "object") {
    for (const x of Object.values(v)) placed(x, inList, out);
  } else if (v !== null && v !== undefined) out.push([v, inList]);
  return out;
}

const cents = (x: number) => Math.round(x * 100);

/**
 * Scalar values of the earlier results in a state.
 *
 * @param state A step's `state_before`.
 * @returns The values, numbers in cents.
 */
export function knownOf(state: Record<string, unknown>): Known {
  const strings = new Set<string>();
  const nums = new Set<number>();
  const sole = new Set<string>();
  for (const [k, v] of Object.entries(state)) {
    if (k === "input") continue;
    for (const [x, inList] of placed(v, false, [])) {
      const key = typeof x === "number" ? `#${cents(x)}` : String(x);
      if (typeof x === "number") nums.add(cents(x));
      else strings.add(String(x));
      if (!inList) sole.add(key);
    }
  }
  const itemOnly = new Set(
    [...strings, ...[...nums].map((n) => `#${n}`)].filter((x) => !sole.has(x)),
  );
  return { strings, numbers: [...nums], numberSet: nums, itemOnly };
}

function userNumbers(text: string): number[] {
  return [...text.matchAll(/\d+(?:\.\d+)?/g)].map((m) => cents(Number(m[0])));
}

function isComputed(value: number, k: Known, user: number[]): boolean {
  const target = cents(value);
  const pool = [...new Set([...k.numbers, ...user])].filter((x) => x > 0);
  const set = new Set(pool);
  for (let i = 0; i < pool.length; i++) {
    for (let m = 2; m <= 9; m++) if (pool[i] * m === target) return true;
    for (let j = i + 1; j < pool.length; j++) {
      const s = pool[i] + pool[j];
      if (s === target || set.has(target - s)) return true;
      if (Math.abs(pool[i] - pool[j]) === target) return true;
      for (let m = 2; m <= 9; m++) if (s * m === target) return true;
    }
  }
  return false;
}

/**
 * Classify one argument value.
 *
 * @param tool The call's tool.
 * @param value The value.
 * @param ctx Earlier results, the user's messages so far, the city table.
 * @returns Its class.
 */
function classify(
  tool: string,
  value: unknown,
  ctx: {
    known: Known;
    userText: string;
    cities: Map<string, string>;
    today: string | null;
  },
): SourceClass {
  const s = String(value);
  const { known, userText } = ctx;
  if (
    typeof value === "number" ? known.numberSet.has(cents(value)) : known
      .strings.has(s)
  ) {
    const key = typeof value === "number" ? `#${cents(value)}` : s;
    return known.itemOnly.has(key) ? "result_item" : "result";
  }
  if (s.length && hasToken(userText, s)) return "user";
  if (typeof value === "string") {
    if (s.length > 1 && hasToken(userText, s, "i")) return "user_case";
    if (dateForms(s).some((r) => r.test(userText))) return "user_date";
    if (ctx.today && relative(ctx.today, s, userText)) return "user_relative";
    const city = ctx.cities.get(s);
    if (city && hasToken(userText, city, "i")) return "user_city";
    if (/_/.test(s) && hasToken(userText, s.replace(/_/g, " "), "i")) {
      return "user_word";
    }
    if (tool === "calculate") {
      const nums = s.match(/\d+(?:\.\d+)?/g) ?? [];
      const user = new Set(userNumbers(userText));
      if (
        nums.length &&
        nums.every((n) =>
          known.numberSet.has(cents(Number(n))) || user.has(cents(Number(n)))
        )
      ) return "computed";
    }
    if (/\s/.test(s) && s.length > 20) return "text";
  }
  if (typeof value === "number") {
    if (
      Number.isInteger(value) && value >= 0 && value <= 10 &&
      hasToken(userText, NUMBER_WORDS[value], "i")
    ) return "user_count";
    if (isComputed(value, known, userNumbers(userText))) return "computed";
  }
  return "none";
}

function relative(today: string, iso: string, text: string): boolean {
  const next = new Date(`${today}T00:00:00Z`);
  next.setUTCDate(next.getUTCDate() + 1);
  if (iso === today) return /\btoday\b/i.test(text);
  return iso === next.toISOString().slice(0, 10) &&
    /\btomorrow\b/i.test(text);
}

/**
 * The domain's today, from a τ² file's policy ("The current time is
 * 2024-05-15 15:00:00 EST"), or null.
 *
 * @param text The trajectory file's text.
 * @returns An ISO date or null.
 */
export function todayOf(text: string): string | null {
  const m = /The current time is (\d{4}-\d{2}-\d{2})/.exec(text);
  return m ? m[1] : null;
}

/** What {@linkcode classifyStep} knows beside the step. */
export interface StepContext {
  /** Airport code → city. */
  cities: Map<string, string>;
  /** The domain's today (ISO), or null. */
  today: string | null;
}

/**
 * Classify every argument value of a step.
 *
 * @param step The normalized step.
 * @param context The cities by name and today's date.
 * @returns One class per scalar argument value, in order.
 */
export function classifyStep(
  step: NormStep,
  context: StepContext,
): SourceClass[] {
  const { cities, today } = context;
  const input = (step.state_before.input ?? {}) as { user?: string[] };
  const ctx = {
    known: knownOf(step.state_before),
    userText: (input.user ?? []).join("\n"),
    cities,
    today,
  };
  return leaves(step.arguments, "", []).map(([, v]) =>
    classify(step.logical_tool, v, ctx)
  );
}
