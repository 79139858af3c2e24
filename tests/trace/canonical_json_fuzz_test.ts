/**
 * `canonicalJson` takes a native fast path for most values (one
 * `JSON.stringify`, sorting only the objects out of order) and writes the
 * rest member by member. Every hash in a store's chain is over its output,
 * so both paths must write exactly what the plain definition writes: keys
 * sorted by UTF-16 code units at every depth, undefined members left out.
 * This test holds it to a reference writer of that definition over seeded
 * random values built from the awkward cases (keys that are array indexes
 * and keys that only look like them, `__proto__`, surrogates, `toJSON`,
 * -0, exponents).
 */
import { assertEquals } from "../_assert.ts";
import { canonicalJson } from "../../lib/trace/mod.ts";

/** The definition, written plainly (slow, obviously right). */
function reference(value: unknown): string {
  if (value === null || typeof value !== "object") {
    return JSON.stringify(value);
  }
  const json = (value as { toJSON?: () => unknown }).toJSON;
  if (typeof json === "function") return reference(json.call(value));
  if (Array.isArray(value)) return `[${value.map(reference).join(",")}]`;
  const obj = value as Record<string, unknown>;
  const members = Object.keys(obj).sort()
    .filter((k) => obj[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${reference(obj[k])}`);
  return `{${members.join(",")}}`;
}

const KEYS = [
  "a",
  "b",
  "Z",
  "_",
  "__proto__",
  "0",
  "1",
  "9",
  "10",
  "01",
  "-1",
  "1.5",
  "4294967294",
  "4294967295",
  "é",
  "\u{1F600}",
  "\uFFFF",
  "",
  " ",
  "constructor",
  "a\u0000",
];

const NUMBERS = [0, -0, 1e21, 1e-7, 0.1, 5e-324, -42, 123456789012];

/** Seeded values: scalars, arrays and objects up to 5 deep. */
function* values(seed: number, count: number): Generator<unknown> {
  let s = seed;
  const rnd = () => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s / 0x7fffffff;
  };
  const pick = <T>(list: readonly T[]): T =>
    list[Math.floor(rnd() * list.length)];
  const value = (depth: number): unknown => {
    const r = rnd();
    if (depth > 4 || r < 0.3) {
      const p = rnd();
      if (p < 0.3) return pick(NUMBERS);
      if (p < 0.5) return `${pick(KEYS)}"\\\n\u2028\ud800`;
      if (p < 0.6) return null;
      if (p < 0.7) return rnd() < 0.5;
      return `s${Math.floor(rnd() * 100)}`;
    }
    if (r < 0.5) {
      return Array.from(
        { length: Math.floor(rnd() * 4) },
        () => value(depth + 1),
      );
    }
    if (r < 0.52) return new Date(Math.floor(rnd() * 1e12));
    const obj: Record<string, unknown> = {};
    const n = Math.floor(rnd() * 6);
    for (let i = 0; i < n; i++) {
      obj[pick(KEYS)] = rnd() < 0.05 ? undefined : value(depth + 1);
    }
    return obj;
  };
  for (let i = 0; i < count; i++) yield value(0);
}

Deno.test("canonicalJson() writes what the plain definition writes, on 20,000 seeded awkward values (fast path and member-by-member alike)", () => {
  let checked = 0;
  for (const v of values(20261127, 20_000)) {
    assertEquals(canonicalJson(v), reference(v), JSON.stringify(v));
    checked++;
  }
  assertEquals(checked, 20_000);
});
