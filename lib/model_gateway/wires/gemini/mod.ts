/**
 * The Gemini API as one wire ({@linkcode geminiWire}): Google's
 * `generateContent` and `streamGenerateContent` (`?alt=sse`) recorded,
 * `countTokens` and every other Gemini path forwarded; upstream
 * `https://generativelanguage.googleapis.com` unless `serve
 * --upstream-gemini URL` or `HARNESS_UPSTREAM_GEMINI` says otherwise; the
 * client's key in `x-goog-api-key` (or `Authorization: Bearer`, or the
 * query's `?key=`) goes to the upstream and nowhere else.
 *
 * Files: `paths.ts` (paths, upstream), `read_request.ts`,
 * `read_answer.ts` (whole, streamed, usage), `call_ids.ts` (ids of calls
 * the API leaves without, and which call a response answers), `write.ts`
 * (package serving), `errors.ts`, `hook_join.ts` (Gemini CLI's hooks'
 * episode, which no request names).
 *
 * @module
 */
import type { WireSpec } from "../wire_spec.ts";
import { isObject } from "../../wire_types.ts";
import {
  DEFAULT_UPSTREAM_GEMINI,
  GEMINI_PATHS,
  geminiUpstreamUrl,
  matchGemini,
} from "./paths.ts";
import { GEMINI_WIRE, readGeminiRequest } from "./read_request.ts";
import { GeminiStream, geminiUsage, readGeminiAnswer } from "./read_answer.ts";
import { geminiWriter } from "./write.ts";
import { geminiError, geminiErrorOf } from "./errors.ts";

export { DEFAULT_UPSTREAM_GEMINI, GEMINI_WIRE };

/** The Gemini API. */
export const geminiWire: WireSpec = {
  name: "gemini",
  wire: GEMINI_WIRE,
  title: "Google Gemini API",
  paths: GEMINI_PATHS,
  match: matchGemini,
  upstream: {
    default: DEFAULT_UPSTREAM_GEMINI,
    env: "HARNESS_UPSTREAM_GEMINI",
    flag: "--upstream-gemini",
    url: geminiUpstreamUrl,
  },
  key: { headers: ["x-goog-api-key", "authorization"], query: ["key"] },
  reader: {
    request: readGeminiRequest,
    response: readGeminiAnswer,
    stream: (request) => new GeminiStream(request),
  },
  writer: geminiWriter,
  history: {
    items: (body) =>
      isObject(body) && Array.isArray(body.contents) ? body.contents : null,
    with: (body, items) => ({ ...body, contents: items }),
  },
  usage: geminiUsage,
  error: geminiError,
  errorOf: geminiErrorOf,
};
