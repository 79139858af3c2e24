/**
 * Canonical JSON (RFC 8785 style): object keys sorted by UTF-16 code units,
 * no insignificant whitespace, numbers and strings as `JSON.stringify` writes
 * them. The same value gives the same bytes anywhere, so a hash over it is
 * reproducible.
 *
 * @module
 */

/**
 * Deepest nesting {@linkcode canonicalJson} serializes: far past any event
 * (`MAX_JSON_DEPTH`) or package, and far short of the stack, so a hostile
 * depth (a package constant 20,000 levels deep) is a clear error instead
 * of "Maximum call stack size exceeded".
 */
export const MAX_CANONICAL_DEPTH = 1000;

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
 * @throws {RangeError} When it nests deeper than {@linkcode MAX_CANONICAL_DEPTH} levels.
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
    switch (scan(value, 0)) {
      case IN_ORDER:
        return JSON.stringify(value);
      case UNSORTED:
        // One native pass that meets each object in sorted order: no
        // string per member and no re-walk of a subtree per level.
        return JSON.stringify(value, sortedMembers);
      default:
        return write(value, 0);
    }
  } catch (err) {
    if (err instanceof TypeError) {
      throw new TypeError(`${err.message} at ${findBadPath(value, "$")}`);
    }
    throw err;
  }
}

/** {@linkcode scan}: the native serializer writes the value canonically. */
const IN_ORDER = 0;
/** {@linkcode scan}: it does once each object's members are in sorted order. */
const UNSORTED = 1;
/** {@linkcode scan}: only the member-by-member writer gets it right. */
const SLOW = 2;

/**
 * Check a value the way {@linkcode write} would (the same errors, the same
 * depth limit) without writing it, and say how it can be serialized:
 * {@linkcode IN_ORDER} when `JSON.stringify` alone writes it canonically,
 * {@linkcode UNSORTED} when it does with {@linkcode sortedMembers}, else
 * {@linkcode SLOW} (a `toJSON` method; an object out of order with a key
 * that may be an array index, which every object lists first).
 */
function scan(value: unknown, depth: number): number {
  switch (typeof value) {
    case "string":
    case "boolean":
      return IN_ORDER;
    case "number":
      if (!Number.isFinite(value)) {
        throw new TypeError(
          `Cannot serialize ${value}: JSON has no non-finite numbers`,
        );
      }
      return IN_ORDER;
    case "object": {
      if (value === null) return IN_ORDER;
      if (depth >= MAX_CANONICAL_DEPTH) throw tooDeep();
      let how = IN_ORDER;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) {
          const item = value[i];
          if (item === undefined) {
            throw new TypeError("Cannot serialize undefined in an array");
          }
          const h = scan(item, depth + 1);
          if (h > how) how = h;
        }
        return how;
      }
      const obj = value as Record<string, unknown>;
      if (typeof (obj as { toJSON?: unknown }).toJSON === "function") {
        return SLOW;
      }
      // for…in over a plain object reads its keys without an array; an
      // inherited enumerable key (not JSON's) sends it the slow way.
      if (!isPlainProto(obj)) return SLOW;
      let digitKey = false;
      let last: string | null = null;
      for (const key in obj) {
        if (last !== null && how === IN_ORDER && last >= key) how = UNSORTED;
        last = key;
        const c = key.charCodeAt(0);
        if (c >= 48 && c <= 57) digitKey = true;
        const item = obj[key];
        if (item === undefined) continue;
        const h = scan(item, depth + 1);
        if (h > how) how = h;
      }
      return how === UNSORTED && digitKey ? SLOW : how;
    }
    default:
      throw new TypeError(
        `Cannot serialize a ${typeof value}: only JSON values are allowed`,
      );
  }
}

/** Whether a value's prototype adds no enumerable keys (a JSON object's). */
function isPlainProto(obj: object): boolean {
  const proto = Object.getPrototypeOf(obj);
  return proto === Object.prototype || proto === null;
}

/**
 * `JSON.stringify` replacer: an object whose members are out of order is
 * written as a copy with them sorted (values checked by {@linkcode scan}).
 */
function sortedMembers(_key: string, value: unknown): unknown {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return value;
  }
  const obj = value as Record<string, unknown>;
  let sorted = true;
  let last: string | null = null;
  for (const key in obj) {
    if (last !== null && last >= key) {
      sorted = false;
      break;
    }
    last = key;
  }
  if (sorted) return value;
  const keys = Object.keys(obj).sort();
  const out: Record<string, unknown> = {};
  for (let i = 0; i < keys.length; i++) out[keys[i]] = obj[keys[i]];
  return out;
}

function tooDeep(): RangeError {
  return new RangeError(
    `Cannot serialize a value nested deeper than ${MAX_CANONICAL_DEPTH} levels, the limit: flatten it`,
  );
}

function write(value: unknown, depth: number): string {
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
      if (depth >= MAX_CANONICAL_DEPTH) throw tooDeep();
      if (Array.isArray(value)) {
        const n = value.length;
        if (n === 0) return "[]";
        let out = "[";
        for (let i = 0; i < n; i++) {
          const item = value[i];
          if (item === undefined) {
            throw new TypeError("Cannot serialize undefined in an array");
          }
          out += (i === 0 ? "" : ",") + write(item, depth + 1);
        }
        return out + "]";
      }
      const obj = value as Record<string, unknown>;
      if (typeof (obj as { toJSON?: unknown }).toJSON === "function") {
        return write((obj as { toJSON(): unknown }).toJSON(), depth);
      }
      // Fast path: a subtree already in canonical order is what the native
      // serializer writes.
      if (isCanonicalOrder(obj, depth)) return JSON.stringify(obj);
      const keys = Object.keys(obj);
      if (keys.length > 1) keys.sort();
      let out = "{";
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i];
        const item = obj[key];
        if (item === undefined) continue;
        out += (out.length === 1 ? "" : ",") + JSON.stringify(key) + ":" +
          write(item, depth + 1);
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
 * (undefined in arrays, non-finite numbers, functions, symbols, toJSON),
 * and no deeper than the limit (past it the slow path names the limit).
 */
function isCanonicalOrder(
  obj: Record<string, unknown>,
  depth: number,
): boolean {
  if (depth >= MAX_CANONICAL_DEPTH) return false;
  const keys = Object.keys(obj);
  for (let i = 0; i < keys.length; i++) {
    if (i > 0 && keys[i - 1] >= keys[i]) return false;
    const v = obj[keys[i]];
    if (v === undefined) continue; // dropped by both
    if (!plainLeafOrCanonical(v, depth + 1)) return false;
  }
  return true;
}

function plainLeafOrCanonical(v: unknown, depth: number): boolean {
  switch (typeof v) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return Number.isFinite(v);
    case "object": {
      if (v === null) return true;
      if (depth >= MAX_CANONICAL_DEPTH) return false;
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) {
          if (v[i] === undefined || !plainLeafOrCanonical(v[i], depth + 1)) {
            return false;
          }
        }
        return true;
      }
      if (typeof (v as { toJSON?: unknown }).toJSON === "function") {
        return false;
      }
      return isCanonicalOrder(v as Record<string, unknown>, depth);
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
