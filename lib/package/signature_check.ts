/**
 * Checking a model's answer against a residual leaf's signature.
 *
 * @module
 */
import type { SignatureField } from "./ir.ts";

/**
 * Why a value does not fit a signature field, or null when it fits.
 *
 * @param v The value.
 * @param f The field: its type, and optional enum and minimum.
 * @returns A sentence, or null.
 */
export function fieldProblem(v: unknown, f: SignatureField): string | null {
  const t = f.type;
  const ok = t === "json"
    ? true
    : t === "integer"
    ? Number.isInteger(v)
    : t === "number"
    ? typeof v === "number" && Number.isFinite(v)
    : t === "array"
    ? Array.isArray(v)
    : t === "object"
    ? typeof v === "object" && v !== null && !Array.isArray(v)
    : t === "null"
    ? v === null
    : t === "string"
    ? typeof v === "string"
    : t === "boolean"
    ? typeof v === "boolean"
    : false;
  if (!ok) return `expected ${t}, got ${JSON.stringify(v)}`;
  if (f.enum && !f.enum.some((e) => JSON.stringify(e) === JSON.stringify(v))) {
    return `expected one of ${JSON.stringify(f.enum)}, got ${
      JSON.stringify(v)
    }`;
  }
  if (f.minimum !== undefined && typeof v === "number" && v < f.minimum) {
    return `expected at least ${f.minimum}, got ${v}`;
  }
  return null;
}
