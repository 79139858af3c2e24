/**
 * Scrubbing known secrets by their exact text: what redaction's shapes
 * (`redact.ts`) cannot find, because the secret has no known shape (a
 * self-hosted model server's token, a key an upstream echoes back in an
 * error), but whose exact value the recorder holds (the client's key on a
 * model call). Every occurrence inside a payload's strings becomes
 * `[REDACTED:client_key]` and is counted in the payload's `redactions`.
 *
 * @module
 */
import type { UnsealedEvent } from "./event.ts";
import type { RedactionCounts } from "./redact.ts";

/** The rule name exact secrets are counted under in `redactions`. */
export const EXACT_SECRET_RULE = "client_key";

/**
 * Secrets shorter than this are not scrubbed: a key of a few characters
 * would mask ordinary words everywhere (no provider issues one).
 */
export const MIN_EXACT_SECRET_CHARS = 8;

/**
 * The texts under which a secret may appear in recorded strings: as it is,
 * JSON-escaped (inside a JSON document kept as a string) and URL-encoded
 * (in a query string), longest first.
 *
 * @param secrets The secrets (empty strings and those shorter than
 *   {@linkcode MIN_EXACT_SECRET_CHARS} are left out).
 * @returns The distinct forms.
 */
export function exactForms(secrets: readonly string[]): string[] {
  const forms = new Set<string>();
  for (const s of secrets) {
    if (typeof s !== "string" || s.length < MIN_EXACT_SECRET_CHARS) continue;
    forms.add(s);
    forms.add(JSON.stringify(s).slice(1, -1));
    forms.add(encodeURIComponent(s));
  }
  // Longest first, so a form inside another is not cut out of it first.
  return [...forms].sort((a, b) => b.length - a.length);
}

/** Request headers whose values are credentials (lower-case names). */
export const CREDENTIAL_HEADERS: readonly string[] = [
  "authorization",
  "proxy-authorization",
  "x-api-key",
  "api-key",
  "anthropic-api-key",
  "x-goog-api-key",
];

/** Query parameters whose values are credentials. */
const CREDENTIAL_PARAMS = ["key", "api_key", "api-key", "apikey", "token"];

/**
 * The credentials a request carries: the values of its credential headers
 * (an `Authorization` value without its scheme, and, for `Basic`, the
 * password it encodes too) and of `?key=`-like query parameters. What a
 * recorder passes to {@linkcode scrubExactEvents} with the events of that
 * exchange.
 *
 * @param header The request's header by lower-case name (null when absent).
 * @param target The request target or URL (its query is read), if any.
 * @returns The secrets (may be empty).
 *
 * @example
 * ```ts
 * import { requestSecrets } from "./scrub_exact.ts";
 * import { deepEqual } from "node:assert/strict";
 * const headers: Record<string, string> = {
 *   authorization: "Bearer selfhosted-7c1f0e22",
 * };
 * deepEqual(
 *   requestSecrets((n) => headers[n] ?? null, "/v1/chat?key=abc12345xyz"),
 *   ["Bearer selfhosted-7c1f0e22", "selfhosted-7c1f0e22", "abc12345xyz"],
 * );
 * ```
 */
export function requestSecrets(
  header: (name: string) => string | null,
  target?: string,
): string[] {
  const out = new Set<string>();
  for (const name of CREDENTIAL_HEADERS) {
    const v = header(name)?.trim();
    if (!v) continue;
    out.add(v);
    const m = /^([A-Za-z][A-Za-z0-9_-]*)\s+(\S.*)$/.exec(v);
    if (!m) continue;
    out.add(m[2]);
    if (m[1].toLowerCase() === "basic") {
      try {
        const text = atob(m[2]);
        const colon = text.indexOf(":");
        if (colon >= 0) out.add(text.slice(colon + 1));
      } catch { /* not base64 */ }
    }
  }
  const q = target?.indexOf("?") ?? -1;
  if (target && q >= 0) {
    const params = new URLSearchParams(target.slice(q + 1).split("#")[0]);
    for (const name of CREDENTIAL_PARAMS) {
      for (const v of params.getAll(name)) if (v) out.add(v);
    }
  }
  return [...out];
}

/**
 * Replace every occurrence of the given secrets in every string inside a
 * value (object keys are left as they are).
 *
 * @param value Any JSON value.
 * @param secrets The exact secrets (e.g. the client's API key).
 * @param name The rule name of the marker and the count.
 * @returns The value (unchanged parts shared; the same value when nothing
 *   matched) and the count of replacements by rule.
 *
 * @example
 * ```ts
 * import { scrubExact } from "./scrub_exact.ts";
 * import { deepEqual } from "node:assert/strict";
 * const key = "selfhosted-7c1f0e22";
 * deepEqual(scrubExact({ error: `bad key ${key}` }, [key]), {
 *   value: { error: "bad key [REDACTED:client_key]" },
 *   counts: { client_key: 1 },
 * });
 * ```
 */
export function scrubExact<T>(
  value: T,
  secrets: readonly string[],
  name: string = EXACT_SECRET_RULE,
): { value: T; counts: RedactionCounts } {
  return scrubForms(value, exactForms(secrets), name);
}

/** {@linkcode scrubExact} with the forms worked out already. */
function scrubForms<T>(
  value: T,
  forms: readonly string[],
  name: string,
): { value: T; counts: RedactionCounts } {
  const counts: RedactionCounts = {};
  if (forms.length === 0) return { value, counts };
  const marker = `[REDACTED:${name}]`;
  // Longest first: the last is the shortest, and a string shorter than it
  // holds none (most of an event's strings: names, ids, roles).
  const shortest = forms[forms.length - 1].length;
  let n = 0;
  const scrub = (text: string): string => {
    if (text.length < shortest) return text;
    let out = text;
    for (const f of forms) {
      if (!out.includes(f)) continue;
      const parts = out.split(f);
      n += parts.length - 1;
      out = parts.join(marker);
    }
    return out;
  };
  const out = walk(value, scrub);
  if (n > 0) counts[name] = n;
  return { value: out as T, counts };
}

/**
 * Events with the given secrets scrubbed from their payloads, the counts
 * merged into each payload's `redactions` (events with no occurrence are
 * returned as they are). What a recorder calls on everything it recorded
 * from one exchange, with the secrets that exchange carried.
 *
 * @param events Events before sealing.
 * @param secrets The exact secrets (e.g. the client's API key).
 * @returns The events.
 */
export function scrubExactEvents(
  events: readonly UnsealedEvent[],
  secrets: readonly string[],
): UnsealedEvent[] {
  return scrubFormsEvents(events, exactForms(secrets));
}

/**
 * {@linkcode scrubExactEvents} with the secrets' forms worked out already
 * ({@linkcode exactForms}): for a recorder that meets the same secrets
 * exchange after exchange (a client's one key).
 *
 * @param events Events before sealing.
 * @param forms What {@linkcode exactForms} gave for the secrets.
 * @returns The events.
 */
export function scrubFormsEvents(
  events: readonly UnsealedEvent[],
  forms: readonly string[],
): UnsealedEvent[] {
  if (forms.length === 0) return [...events];
  return events.map((ev) => {
    const { value, counts } = scrubForms(ev.payload, forms, EXACT_SECRET_RULE);
    if (Object.keys(counts).length === 0) return ev;
    const had = (value.redactions ?? {}) as RedactionCounts;
    const merged: RedactionCounts = { ...had };
    for (const [k, c] of Object.entries(counts)) {
      merged[k] = (merged[k] ?? 0) + c;
    }
    return { ...ev, payload: { ...value, redactions: merged } };
  });
}

function walk(value: unknown, scrub: (text: string) => string): unknown {
  if (typeof value === "string") return scrub(value);
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const r = walk(value[i], scrub);
      if (out === null && r !== value[i]) out = value.slice(0, i);
      if (out !== null) out.push(r);
    }
    return out ?? value;
  }
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj);
  let out: Record<string, unknown> | null = null;
  for (let i = 0; i < keys.length; i++) {
    const v = obj[keys[i]];
    const r = walk(v, scrub);
    if (out === null && r !== v) {
      out = {};
      for (let j = 0; j < i; j++) out[keys[j]] = obj[keys[j]];
    }
    if (out !== null) out[keys[i]] = r;
  }
  return out ?? value;
}
