/**
 * Python's number and JSON text, as τ²-bench produces them: `round(x, 2)`
 * (correctly rounded, ties to even), `repr(float)` and `json.dumps` with its
 * defaults (`", "` and `": "` separators, non-ASCII escaped). The retail
 * models declare a few fields as `float`, so those keys are written as
 * Python floats (`100.0`, not `100`).
 *
 * @module
 */

/** Keys whose numbers τ²'s retail models hold as Python floats. */
export const FLOAT_KEYS: ReadonlySet<string> = new Set([
  "price",
  "balance",
  "amount",
  "exchange_price_difference",
]);

/**
 * Python's `round(x, 2)`: the nearest multiple of 0.01 to the exact binary
 * value of `x`, ties (only possible at odd multiples of 1/8) to even.
 *
 * @param x The number.
 * @returns `x` rounded to two decimals.
 */
export function pyRound2(x: number): number {
  if (!Number.isFinite(x)) return x;
  const eighths = x * 8; // exact: a power of two
  if (Number.isInteger(eighths) && Math.abs(eighths % 2) === 1) {
    // An exact tie between two hundredths: pick the even one.
    const down = Math.floor(x * 100);
    const pick = down % 2 === 0 ? down : down + 1;
    return pick / 100;
  }
  const r = Number(Math.abs(x).toFixed(2));
  return x < 0 || Object.is(x, -0) ? -r : r;
}

/**
 * Python's `repr(float)`: the shortest round-trip digits, fixed notation
 * for decimal exponents from -4 to 15 (always with a fraction), else
 * scientific with a signed, at-least-two-digit exponent.
 *
 * @param x The number.
 * @returns Its Python text (`3.0`, `1e+16`, `1e-05`, `inf`, `nan`).
 */
export function pyFloatRepr(x: number): string {
  if (Number.isNaN(x)) return "nan";
  if (x === Infinity) return "inf";
  if (x === -Infinity) return "-inf";
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const sign = x < 0 ? "-" : "";
  const [mant, expText] = Math.abs(x).toExponential().split("e");
  const exp = Number(expText);
  const digits = mant.replace(".", "");
  if (exp >= -4 && exp < 16) {
    if (exp < 0) return `${sign}0.${"0".repeat(-exp - 1)}${digits}`;
    const intPart = digits.slice(0, exp + 1).padEnd(exp + 1, "0");
    const frac = digits.slice(exp + 1) || "0";
    return `${sign}${intPart}.${frac}`;
  }
  const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  const e = `${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
  return `${sign}${m}e${e}`;
}

function pyString(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const ch = s[i];
    if (ch === '"') out += '\\"';
    else if (ch === "\\") out += "\\\\";
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (ch === "\b") out += "\\b";
    else if (ch === "\f") out += "\\f";
    else if (c < 0x20 || c > 0x7e) {
      out += "\\u" + c.toString(16).padStart(4, "0");
    } else out += ch;
  }
  return out + '"';
}

function pyNumber(n: number, asFloat: boolean): string {
  if (!Number.isFinite(n)) {
    return Number.isNaN(n) ? "NaN" : n > 0 ? "Infinity" : "-Infinity";
  }
  if (asFloat || !Number.isInteger(n)) return pyFloatRepr(n);
  return Object.is(n, -0) ? "0" : String(BigInt(n));
}

function dump(value: unknown, asFloat: boolean): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "string") return pyString(value);
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "number") return pyNumber(value, asFloat);
  if (Array.isArray(value)) {
    return `[${value.map((v) => dump(v, asFloat)).join(", ")}]`;
  }
  if (typeof value === "object") {
    const parts = Object.entries(value as Record<string, unknown>).map((
      [k, v],
    ) => `${pyString(k)}: ${dump(v, FLOAT_KEYS.has(k))}`);
    return `{${parts.join(", ")}}`;
  }
  return pyString(String(value));
}

/**
 * Python's `json.dumps(value)` with its default options, keys in insertion
 * order; numbers under {@link FLOAT_KEYS} are written as floats.
 *
 * @param value A JSON-like value (objects, arrays, strings, numbers, booleans, null).
 * @returns The JSON text Python would write.
 */
export function pyJsonDumps(value: unknown): string {
  return dump(value, false);
}
