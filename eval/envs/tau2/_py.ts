/**
 * Python number and JSON formatting the τ² tools rely on: `round(x, 2)`,
 * `repr(float)` and `json.dumps` (default separators, `ensure_ascii`).
 *
 * @module
 */

/**
 * Python's `round(x, 2)` on a float: the double nearest the correctly
 * rounded decimal, exact ties to even.
 *
 * @param x The value.
 * @returns The rounded value.
 */
export function pyRound2(x: number): number {
  if (!Number.isFinite(x) || Math.abs(x) >= 1e20) return x;
  // An exact tie at two decimals is only possible when x = odd / 8.
  const eighths = x * 8;
  if (Number.isInteger(eighths) && Math.abs(eighths) % 2 === 1) {
    const hundredths = x * 100; // exact: odd * 12.5
    const down = Math.floor(hundredths);
    const n = down % 2 === 0 ? down : down + 1;
    return n / 100;
  }
  return Number(x.toFixed(2));
}

/**
 * Python's `repr(float)`: the shortest round-trip digits, exponent form
 * below 1e-4 and from 1e16, otherwise a point with at least one decimal.
 *
 * @param x The value.
 * @returns Python's text for it.
 */
export function pyFloatRepr(x: number): string {
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const [mant, expText] = x.toExponential().split("e");
  const exp = Number(expText);
  const neg = mant.startsWith("-");
  const digits = mant.replace("-", "").replace(".", "");
  const sign = neg ? "-" : "";
  if (exp < -4 || exp >= 16) {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const e = Math.abs(exp).toString().padStart(2, "0");
    return `${sign}${m}e${exp < 0 ? "-" : "+"}${e}`;
  }
  if (exp < 0) return `${sign}0.${"0".repeat(-exp - 1)}${digits}`;
  const intPart = digits.slice(0, exp + 1).padEnd(exp + 1, "0");
  const frac = digits.slice(exp + 1);
  return `${sign}${intPart}.${frac === "" ? "0" : frac}`;
}

/** Python `json.dumps` string escaping with `ensure_ascii=True`. */
function pyString(s: string): string {
  return JSON.stringify(s).replace(
    /[\u007f-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/**
 * Python's `json.dumps(value)` for τ² model dumps: every number is a
 * float (all numeric fields of the retail models are), `", "` and `": "`
 * separators, non-ASCII escaped.
 *
 * @param value A JSON value.
 * @param options `sort_keys`.
 * @returns The JSON text Python would write.
 */
export function pyJsonDumps(
  value: unknown,
  options: { sortKeys?: boolean } = {},
): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "number") {
    if (Number.isNaN(value)) return "NaN";
    if (!Number.isFinite(value)) return value > 0 ? "Infinity" : "-Infinity";
    return pyFloatRepr(value);
  }
  if (typeof value === "string") return pyString(value);
  if (Array.isArray(value)) {
    return `[${value.map((v) => pyJsonDumps(v, options)).join(", ")}]`;
  }
  if (typeof value === "object") {
    const keys = Object.keys(value as Record<string, unknown>);
    if (options.sortKeys) keys.sort();
    const parts = keys.map((k) =>
      `${pyString(k)}: ${
        pyJsonDumps((value as Record<string, unknown>)[k], options)
      }`
    );
    return `{${parts.join(", ")}}`;
  }
  return pyString(String(value));
}
