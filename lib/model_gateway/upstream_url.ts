/**
 * The upstream URL of a model API request: its path under the upstream's
 * base URL, dot segments resolved the way a URL parser resolves them
 * (`.`, `..`, their `%2e` spellings, `\` read as `/`), and refused when the
 * result leaves the API's path (`/v1/../../outside-the-api` would reach
 * `/outside-the-api` on the upstream's host with the client's key). The
 * URL is then parsed and checked once more: the upstream's origin, under
 * its base path.
 *
 * @module
 */

/** A dot segment, as the WHATWG URL parser reads one (case-insensitive `%2e`). */
function dotKind(segment: string): 0 | 1 | 2 {
  const s = segment.toLowerCase();
  if (s === "." || s === "%2e") return 1;
  if (s === ".." || s === ".%2e" || s === "%2e." || s === "%2e%2e") return 2;
  return 0;
}

/**
 * An API path with its dot segments resolved, or null when it leaves its
 * API version's folder (`/v1/`, `/v1beta/` …) or is under none.
 *
 * @param path `/v1/…` (no query).
 * @param prefixes The API folders (`/v1/` by default).
 * @returns The resolved path, under the same folder, or null.
 *
 * @example
 * ```ts
 * import { resolveApiPath } from "./upstream_url.ts";
 * import { equal } from "node:assert/strict";
 * equal(resolveApiPath("/v1/models/../chat/completions"), "/v1/chat/completions");
 * equal(resolveApiPath("/v1/../../outside-the-api"), null);
 * equal(resolveApiPath("/v1/%2e%2e/x"), null);
 * equal(resolveApiPath("/v1beta/models/m:generateContent", ["/v1/", "/v1beta/"]), "/v1beta/models/m:generateContent");
 * ```
 */
export function resolveApiPath(
  path: string,
  prefixes: readonly string[] = ["/v1/"],
): string | null {
  const prefix = prefixes.find((p) => path.startsWith(p));
  if (prefix === undefined) return null;
  // The common case: nothing to resolve.
  if (!/[.\\%]/.test(path)) return path;
  const parts = path.replaceAll("\\", "/").split("/");
  const out: string[] = [];
  for (let i = 1; i < parts.length; i++) {
    const seg = parts[i];
    const kind = dotKind(seg);
    const last = i === parts.length - 1;
    if (kind === 0) out.push(seg);
    else {
      if (kind === 2) {
        if (out.length === 0) return null;
        out.pop();
      }
      // A final dot segment leaves the path ending in a slash.
      if (last) out.push("");
    }
  }
  const folder = prefix.slice(1, -1);
  if (out[0] !== folder || out.length < 2) return null;
  return `/${out.join("/")}`;
}

/**
 * The upstream URL for a request, or null when it would leave the
 * upstream's base path or origin.
 *
 * @param base The upstream's base URL, no trailing slash
 *   (`https://api.openai.com/v1`, `http://host/openai`).
 * @param rest The path under it (`/chat/completions`, `/v1/messages`),
 *   resolved already.
 * @param query The query string with its `?`, or "".
 * @returns The URL, or null.
 */
export function upstreamUrl(
  base: string,
  rest: string,
  query: string,
): string | null {
  const url = `${base}${rest}${query}`;
  let parsed: URL;
  let root: URL;
  try {
    parsed = new URL(url);
    root = new URL(base);
  } catch {
    return null;
  }
  const prefix = root.pathname.replace(/\/+$/, "");
  if (
    parsed.origin !== root.origin ||
    !parsed.pathname.startsWith(`${prefix}/`)
  ) return null;
  return url;
}
