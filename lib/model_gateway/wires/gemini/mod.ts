/**
 * The Gemini API as one wire ({@linkcode geminiWire}): Google's
 * `generateContent` and `streamGenerateContent` (`?alt=sse`) recorded,
 * `countTokens` and every other Gemini path forwarded; upstream
 * `https://generativelanguage.googleapis.com` unless `serve
 * --upstream-gemini URL` or `HARNESS_UPSTREAM_GEMINI` says otherwise (the
 * SDK's base URL: the origin and any path prefix, no API version); the
 * client's key in `x-goog-api-key` (or `Authorization: Bearer`, or the
 * query's `?key=`) goes to the upstream and nowhere else.
 *
 * Files: `paths.ts` (paths), `read_request.ts`, `read_answer.ts` (whole,
 * streamed, usage), `call_ids.ts` (ids of calls the API leaves without, and
 * which call a response answers), `write.ts` (package serving),
 * `errors.ts`, `hook_join.ts` (Gemini CLI's hooks' episode, which no
 * request names).
 *
 * @module
 */
import type { WireSpec } from "../wire_spec.ts";
import {
  isObject,
  type NormRequest,
  type WireReader,
} from "../../wire_types.ts";
import { DEFAULT_UPSTREAM_GEMINI, GEMINI_PATHS, matchGemini } from "./paths.ts";
import { GEMINI_WIRE, readGeminiRequest } from "./read_request.ts";
import { GeminiStream, geminiUsage, readGeminiAnswer } from "./read_answer.ts";
import { geminiWriter } from "./write.ts";
import { geminiError, geminiErrorOf } from "./errors.ts";
import { GeminiHookJoin } from "./hook_join.ts";

/** A request not read yet: an answer read before its request is at place 0. */
const UNREAD: NormRequest = {
  wire: GEMINI_WIRE,
  model: null,
  stream: false,
  messages: [],
  tools: [],
  params: {},
  session_id: null,
  previous_response_id: null,
};

/** The Gemini API. */
export const geminiWire: WireSpec = {
  wire: GEMINI_WIRE,
  title: "Gemini generateContent",
  paths: GEMINI_PATHS,
  prefixes: ["/v1beta/", "/v1/", "/v1alpha/"],
  match: matchGemini,
  upstream: {
    name: "gemini",
    default: DEFAULT_UPSTREAM_GEMINI,
    strip: "",
    title: "Gemini API",
    sdk_env: "GOOGLE_GEMINI_BASE_URL",
    sdk_path: "",
  },
  key: { headers: ["x-goog-api-key", "authorization"], query: ["key"] },
  reader(route): WireReader {
    // The model and the streaming are in the path; an answer's calls are
    // read by their place in the request's contents.
    let read = UNREAD;
    return {
      request: (body, hashes) => read = readGeminiRequest(body, route, hashes),
      response: (body) => readGeminiAnswer(body, read),
      streamReader: () => new GeminiStream(read),
    };
  },
  writer: geminiWriter,
  history: {
    items: (body) =>
      isObject(body) && Array.isArray(body.contents) ? body.contents : null,
    key: "contents",
  },
  usage: geminiUsage,
  others: (a) =>
    isObject(a) && Array.isArray(a.candidates) &&
    (a.candidates.length > 1 ||
      a.candidates.some((c) => isObject(c) && (c.index ?? 0) !== 0)),
  error: geminiError,
  errorOf: geminiErrorOf,
  hooks: () => new GeminiHookJoin(),
};
