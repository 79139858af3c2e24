/**
 * The Gemini API's paths as the gateway takes them, and its upstream.
 *
 * | path | recorded |
 * | --- | --- |
 * | `POST /v1beta/models/{model}:generateContent` | yes |
 * | `POST /v1beta/models/{model}:streamGenerateContent` (`?alt=sse`) | yes |
 * | `POST /v1beta/models/{model}:countTokens` | no (forwarded) |
 * | any other `/v1beta/…` (`GET /v1beta/models`, `:embedContent`, files …) | no (forwarded) |
 *
 * The same under `/v1/` (the default of `@google/genai` 3.x; Gemini CLI
 * 0.61's is `v1beta`, `/v1/` with `GOOGLE_GENAI_API_VERSION=v1`) and
 * `/v1alpha/`: a `/v1/` path is Gemini's
 * when it names a model and a method (`/v1/models/{model}:{method}`, the
 * colon no OpenAI or Anthropic path has) or carries `x-goog-api-key`, so
 * the `/v1/…` catch-all of the other wires never takes it. `tunedModels/`
 * paths are read like `models/` ones.
 *
 * The upstream is written as the SDK's base URL (`@google/genai`'s
 * `httpOptions.baseUrl`, Gemini CLI's `GOOGLE_GEMINI_BASE_URL`): the origin
 * and any path prefix, without the API version, which the path brings.
 *
 * @module
 */
import type { WirePath, WireRoute } from "../wire_spec.ts";

/** Google's public Gemini API (the SDK's default base URL). */
export const DEFAULT_UPSTREAM_GEMINI =
  "https://generativelanguage.googleapis.com";

/** The API versions the wire answers under. */
const VERSIONS = ["v1beta", "v1", "v1alpha"];

/** Methods on a model whose exchange is recorded, and whether they stream. */
const RECORDED: Record<string, boolean> = {
  generateContent: false,
  streamGenerateContent: true,
};

const MODEL_PATH =
  /^\/(v1beta|v1|v1alpha)\/((?:models|tunedModels)\/[^/:]+):([A-Za-z]+)$/;

/** The paths, for the route table and the docs. */
export const GEMINI_PATHS: readonly WirePath[] = [
  {
    method: "POST",
    shown: "/v1beta/models/{model}:generateContent",
    path: MODEL_PATH,
    recorded: true,
    what: "Gemini generateContent: forwarded (or served) and recorded",
  },
  {
    method: "POST",
    shown: "/v1beta/models/{model}:streamGenerateContent",
    path: MODEL_PATH,
    recorded: true,
    what:
      "Gemini streamGenerateContent (alt=sse): relayed as it streams and recorded",
  },
  {
    method: "POST",
    shown: "/v1beta/models/{model}:countTokens",
    path: MODEL_PATH,
    recorded: false,
    what: "Gemini token counting: forwarded",
  },
  {
    method: "*",
    shown: "/v1beta/…",
    path: /^\/v1(beta|alpha)\//,
    recorded: false,
    what:
      "any other Gemini API path (model list, embeddings, files): forwarded; the same under /v1/models/{model}:{method} and /v1alpha/",
  },
];

/**
 * Whether a request is the Gemini API's, and how.
 *
 * @param method HTTP method.
 * @param path The API path (no query).
 * @param header One request header.
 * @returns The route, or null when it is not Gemini's.
 *
 * @example
 * ```ts
 * import { equal } from "node:assert/strict";
 * import { matchGemini } from "./paths.ts";
 * const none = () => null;
 * const r = matchGemini("POST", "/v1beta/models/gemini-2.5-flash:streamGenerateContent", none)!;
 * equal(r.model, "gemini-2.5-flash");
 * equal(r.stream, true);
 * equal(matchGemini("POST", "/v1/models/m:generateContent", none)!.recorded, true);
 * equal(matchGemini("POST", "/v1/chat/completions", none), null);
 * ```
 */
export function matchGemini(
  method: string,
  path: string,
  header: (name: string) => string | null,
): WireRoute | null {
  const m = MODEL_PATH.exec(path);
  if (m) {
    const name = m[2].startsWith("models/") ? m[2].slice(7) : m[2];
    const api = m[3];
    const recorded = method === "POST" && api in RECORDED;
    return {
      path,
      recorded,
      stream: recorded && RECORDED[api],
      model: decodeURIComponent(name),
      method: api,
    };
  }
  const version = /^\/([^/]+)\//.exec(path)?.[1] ?? "";
  if (!VERSIONS.includes(version)) return null;
  // `/v1beta/…` and `/v1alpha/…` are Gemini's alone; `/v1/…` only with
  // Google's key header (the OpenAI and Anthropic wires share `/v1/`).
  if (version === "v1" && header("x-goog-api-key") === null) return null;
  return { path, recorded: false, stream: false, model: null, method: null };
}
