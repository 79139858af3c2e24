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
 * import { assertEquals } from "node:assert/strict";
 * assertEquals(canonicalJson({ b: 1, a: [true, null] }), '{"a":[true,null],"b":1}');
 * ```
 */
export function canonicalJson(value: unknown): string {
  return write(value, "$");
}

function write(value: unknown, path: string): string {
  switch (typeof value) {
    case "string":
      return JSON.stringify(value);
    case "boolean":
      return value ? "true" : "false";
    case "number":
      if (!Number.isFinite(value)) {
        throw new TypeError(
          `Cannot serialize ${value} at ${path}: JSON has no non-finite numbers`,
        );
      }
      return JSON.stringify(value);
    case "object": {
      if (value === null) return "null";
      if (Array.isArray(value)) {
        let out = "[";
        for (let i = 0; i < value.length; i++) {
          if (i > 0) out += ",";
          const item = value[i];
          if (item === undefined) {
            throw new TypeError(
              `Cannot serialize undefined at ${path}[${i}]: use null`,
            );
          }
          out += write(item, `${path}[${i}]`);
        }
        return out + "]";
      }
      const obj = value as Record<string, unknown>;
      if (typeof (obj as { toJSON?: unknown }).toJSON === "function") {
        return write((obj as { toJSON(): unknown }).toJSON(), path);
      }
      const keys = Object.keys(obj).sort();
      let out = "{";
      let first = true;
      for (const key of keys) {
        const item = obj[key];
        if (item === undefined) continue;
        if (!first) out += ",";
        first = false;
        out += JSON.stringify(key) + ":" + write(item, `${path}.${key}`);
      }
      return out + "}";
    }
    default:
      throw new TypeError(
        `Cannot serialize a ${typeof value} at ${path}: only JSON values are allowed`,
      );
  }
}
