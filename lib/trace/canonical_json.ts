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
    const walk: Walk = { slow: false };
    const view = sortedView(value, 0, walk);
    // One native pass over the value, or over a copy of the parts whose
    // members were out of order (made once, sorted): no string per member
    // and no call back into script per value.
    return walk.slow ? write(value, 0) : JSON.stringify(view);
  } catch (err) {
    if (err instanceof TypeError) {
      throw new TypeError(`${err.message} at ${findBadPath(value, "$")}`);
    }
    throw err;
  }
}

/** What {@linkcode sortedView} found on its way. */
interface Walk {
  /**
   * Only the member-by-member writer gets the value right: a `toJSON`
   * method, a prototype that is not a plain object's, or an object out of
   * order with a key that may be an array index (which every object lists
   * first) or `__proto__` (which a copy would not hold as a member).
   */
  slow: boolean;
}

/**
 * Check a value the way {@linkcode write} would (the same errors, the same
 * depth limit) and give what `JSON.stringify` writes canonically: the
 * value itself where every object's members are in sorted order, else a
 * copy of the objects (and the arrays holding them) that are not, with
 * their members sorted. Sets `walk.slow` (and returns at once) when only
 * {@linkcode write} gets it right.
 */
function sortedView(value: unknown, depth: number, walk: Walk): unknown {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      if (!Number.isFinite(value)) {
        throw new TypeError(
          `Cannot serialize ${value}: JSON has no non-finite numbers`,
        );
      }
      return value;
    case "object": {
      if (value === null) return value;
      if (depth >= MAX_CANONICAL_DEPTH) throw tooDeep();
      if (Array.isArray(value)) {
        let out: unknown[] | null = null;
        for (let i = 0; i < value.length; i++) {
          const item = value[i];
          // Strings first: most leaves are, and they need no call.
          if (typeof item === "string") continue;
          if (item === undefined) {
            throw new TypeError("Cannot serialize undefined in an array");
          }
          const r = sortedView(item, depth + 1, walk);
          if (walk.slow) return value;
          if (r !== item) {
            if (out === null) out = value.slice();
            out[i] = r;
          }
        }
        return out ?? value;
      }
      const obj = value as Record<string, unknown>;
      if (
        typeof (obj as { toJSON?: unknown }).toJSON === "function" ||
        // for…in reads a plain object's keys without an array; an
        // inherited enumerable key (not JSON's) needs the slow way.
        !isPlainProto(obj)
      ) {
        walk.slow = true;
        return value;
      }
      let inOrder = true;
      let awkward = false;
      let changed: Map<string, unknown> | null = null;
      let last: string | null = null;
      for (const key in obj) {
        if (last !== null && inOrder && last >= key) inOrder = false;
        last = key;
        const c = key.charCodeAt(0);
        if ((c >= 48 && c <= 57) || key === "__proto__") awkward = true;
        const item = obj[key];
        if (item === undefined || typeof item === "string") continue;
        const r = sortedView(item, depth + 1, walk);
        if (walk.slow) return value;
        if (r !== item) (changed ??= new Map()).set(key, r);
      }
      if (inOrder && changed === null) return value;
      if (awkward) {
        walk.slow = true;
        return value;
      }
      const keys = Object.keys(obj);
      if (!inOrder) keys.sort();
      const out: Record<string, unknown> = {};
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i];
        const item = obj[k];
        out[k] = changed !== null && changed.has(k) ? changed.get(k) : item;
      }
      return out;
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
