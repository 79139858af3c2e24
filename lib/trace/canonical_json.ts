/**
 * Canonical JSON (RFC 8785 style): object keys sorted by UTF-16 code units,
 * no insignificant whitespace, numbers and strings as `JSON.stringify` writes
 * them. The same value gives the same bytes anywhere, so a hash over it is
 * reproducible.
 *
 * @module
 */

/**
 * Serialize a JSON value canonically.
 *
 * Object properties whose value is `undefined` are omitted (as JSON does);
 * `undefined` at the top level or inside an array, non-finite numbers,
 * bigints, functions and symbols are rejected.
 *
 * @param value A JSON-compatible value.
 * @returns The canonical JSON text.
 * @throws {TypeError} When the value holds something JSON cannot express.
 *
 * @example Keys are sorted, whitespace is dropped
 * ```ts
 * import { canonicalJson } from "./canonical_json.ts";
 * import { strictEqual } from "node:assert/strict";
 * strictEqual(canonicalJson({ b: 1, a: [true, null] }), '{"a":[true,null],"b":1}');
 * ```
 */
export function canonicalJson(value: unknown): string {
  try {
    return write(value);
  } catch (err) {
    if (err instanceof TypeError) {
      throw new TypeError(`${err.message} at ${findBadPath(value, "$")}`);
    }
    throw err;
  }
}

function write(value: unknown): string {
  switch (typeof value) {
    case "string":
      return JSON.stringify(value);
    case "boolean":
      return value ? "true" : "false";
    case "number":
      if (!Number.isFinite(value)) {
        throw new TypeError(
          `Cannot serialize ${value}: JSON has no non-finite numbers`,
        );
      }
      return JSON.stringify(value);
    case "object": {
      if (value === null) return "null";
      if (Array.isArray(value)) {
        const n = value.length;
        if (n === 0) return "[]";
        let out = "[";
        for (let i = 0; i < n; i++) {
          const item = value[i];
          if (item === undefined) {
            throw new TypeError("Cannot serialize undefined in an array");
          }
          out += (i === 0 ? "" : ",") + write(item);
        }
        return out + "]";
      }
      const obj = value as Record<string, unknown>;
      if (typeof (obj as { toJSON?: unknown }).toJSON === "function") {
        return write((obj as { toJSON(): unknown }).toJSON());
      }
      // Fast path: a subtree already in canonical order is what the native
      // serializer writes.
      if (isCanonicalOrder(obj)) return JSON.stringify(obj);
      const keys = Object.keys(obj);
      if (keys.length > 1) keys.sort();
      let out = "{";
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i];
        const item = obj[key];
        if (item === undefined) continue;
        out += (out.length === 1 ? "" : ",") + JSON.stringify(key) + ":" +
          write(item);
      }
      return out + "}";
    }
    default:
      throw new TypeError(
        `Cannot serialize a ${typeof value}: only JSON values are allowed`,
      );
  }
}

/**
 * Whether `JSON.stringify` would write this object canonically: keys already
 * sorted at every depth, and nothing it would silently drop or change
 * (undefined in arrays, non-finite numbers, functions, symbols, toJSON).
 */
function isCanonicalOrder(obj: Record<string, unknown>): boolean {
  const keys = Object.keys(obj);
  for (let i = 0; i < keys.length; i++) {
    if (i > 0 && keys[i - 1] >= keys[i]) return false;
    const v = obj[keys[i]];
    if (v === undefined) continue; // dropped by both
    if (!plainLeafOrCanonical(v)) return false;
  }
  return true;
}

function plainLeafOrCanonical(v: unknown): boolean {
  switch (typeof v) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return Number.isFinite(v);
    case "object": {
      if (v === null) return true;
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) {
          if (v[i] === undefined || !plainLeafOrCanonical(v[i])) return false;
        }
        return true;
      }
      if (typeof (v as { toJSON?: unknown }).toJSON === "function") {
        return false;
      }
      return isCanonicalOrder(v as Record<string, unknown>);
    }
    default:
      return false;
  }
}

/** Path of the first value JSON cannot hold (for error messages only). */
function findBadPath(value: unknown, path: string): string {
  if (typeof value === "number") return Number.isFinite(value) ? "" : path;
  if (
    value === null || typeof value === "string" || typeof value === "boolean"
  ) return "";
  if (typeof value !== "object") return path;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      if (value[i] === undefined) return `${path}[${i}]`;
      const p = findBadPath(value[i], `${path}[${i}]`);
      if (p) return p;
    }
    return "";
  }
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined) continue;
    const p = findBadPath(v, `${path}.${k}`);
    if (p) return p;
  }
  return path;
}
