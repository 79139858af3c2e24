/**
 * The client's own key, scrubbed from everything recorded of its exchange.
 * The gateway holds the exact key a client sent (`authorization`,
 * `x-api-key`, `api-key`, `x-goog-api-key`, `anthropic-api-key`, a `key`
 * query parameter), so an upstream that echoes it (a 401 quoting it) or a
 * user who pastes it is masked whatever its shape, where the redaction
 * rules know only the shapes they name.
 *
 * @module
 */

/** Headers that carry a client's key. */
const KEY_HEADERS = [
  "authorization",
  "x-api-key",
  "api-key",
  "x-goog-api-key",
  "anthropic-api-key",
];

/** Query parameters that carry a client's key. */
const KEY_PARAMS = ["key", "api_key", "api-key"];

/** Shorter values are not scrubbed (they would mask ordinary words). */
export const MIN_KEY_CHARS = 8;

/** What a scrubbed key is replaced by. */
export const KEY_MARK = "[REDACTED:client_key]";

/**
 * The keys a request carries, each as sent and, for `Authorization`, the
 * credential after its scheme (`Bearer`, `Basic` …).
 *
 * @param header Reads one request header.
 * @param query The query string (with or without `?`).
 * @returns The keys of at least {@linkcode MIN_KEY_CHARS} characters, longest first.
 *
 * @example
 * ```ts
 * import { clientKeys } from "./client_keys.ts";
 * import { deepEqual } from "node:assert/strict";
 * const h = new Headers({ authorization: "Bearer gsk_abcdefgh12345" });
 * deepEqual(clientKeys((n) => h.get(n), "?key=AIzaSyZZZ123"), [
 *   "Bearer gsk_abcdefgh12345",
 *   "gsk_abcdefgh12345",
 *   "AIzaSyZZZ123",
 * ]);
 * ```
 */
export function clientKeys(
  header: (name: string) => string | null,
  query: string,
): string[] {
  const out = new Set<string>();
  const add = (v: string | null | undefined) => {
    const t = v?.trim();
    if (t && t.length >= MIN_KEY_CHARS) out.add(t);
  };
  for (const name of KEY_HEADERS) {
    const v = header(name);
    if (v === null) continue;
    add(v);
    const m = /^[A-Za-z][A-Za-z0-9_-]*\s+(\S+)$/.exec(v.trim());
    if (m) add(m[1]);
  }
  if (query.length > 1) {
    const q = new URLSearchParams(
      query.startsWith("?") ? query.slice(1) : query,
    );
    for (const p of KEY_PARAMS) for (const v of q.getAll(p)) add(v);
  }
  return [...out].sort((a, b) => b.length - a.length);
}

/**
 * A text with every key replaced by {@linkcode KEY_MARK}.
 *
 * @param text The text.
 * @param keys The keys (longest first).
 * @returns The text scrubbed (the same string when no key is in it).
 */
export function scrubText(text: string, keys: readonly string[]): string {
  let out = text;
  for (const k of keys) {
    if (out.includes(k)) out = out.replaceAll(k, KEY_MARK);
  }
  return out;
}

/**
 * A JSON-like value with every key replaced in its strings and object
 * keys; parts without a key are the same objects.
 *
 * @param value The value.
 * @param keys The keys (longest first).
 * @returns The value scrubbed.
 */
export function scrubValue<T>(value: T, keys: readonly string[]): T {
  if (keys.length === 0) return value;
  return walk(value, keys) as T;
}

function walk(v: unknown, keys: readonly string[]): unknown {
  if (typeof v === "string") return scrubText(v, keys);
  if (typeof v !== "object" || v === null) return v;
  if (Array.isArray(v)) {
    let copy: unknown[] | null = null;
    for (let i = 0; i < v.length; i++) {
      const x = walk(v[i], keys);
      if (x !== v[i]) (copy ??= v.slice())[i] = x;
    }
    return copy ?? v;
  }
  let copy: Record<string, unknown> | null = null;
  for (const k in v) {
    if (!Object.hasOwn(v, k)) continue;
    const x = (v as Record<string, unknown>)[k];
    const y = walk(x, keys);
    const k2 = scrubText(k, keys);
    if (y !== x || k2 !== k) {
      copy ??= { ...(v as Record<string, unknown>) };
      if (k2 !== k) delete copy[k];
      copy[k2] = y;
    }
  }
  return copy ?? v;
}
