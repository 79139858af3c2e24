/**
 * OpenAI Chat Completions as one wire ({@linkcode openaiChatWireSpec}):
 * `POST /v1/chat/completions` recorded, and, tried last of all the wires,
 * every other `/v1/…` path forwarded to the OpenAI upstream (`GET
 * /v1/models` …). Its upstream, shared with the Responses API
 * ({@linkcode OPENAI_UPSTREAM}), is written as the OpenAI SDK's base URL
 * (with `/v1`).
 *
 * @module
 */
import type { WireSpec, WireUpstream } from "../wire_spec.ts";
import { isObject } from "../../wire_types.ts";
import { chatUsage, openaiChatWire } from "./read.ts";
import { chat } from "./write.ts";
import { openaiError, typedErrorOf } from "./errors.ts";

/** OpenAI's API (the Chat Completions and Responses wires' upstream). */
export const OPENAI_UPSTREAM: WireUpstream = {
  name: "openai",
  default: "https://api.openai.com/v1",
  strip: "/v1",
  title: "OpenAI",
  sdk_env: "OPENAI_BASE_URL",
  sdk_path: "/v1",
};

/** OpenAI Chat Completions. */
export const openaiChatWireSpec: WireSpec = {
  wire: "openai_chat",
  title: "OpenAI Chat Completions",
  paths: [
    {
      method: "POST",
      shown: "/v1/chat/completions",
      path: "/v1/chat/completions",
      recorded: true,
      what: "OpenAI Chat Completions: forwarded (or served) and recorded",
    },
    {
      method: "*",
      shown: "/v1/…",
      path: /^\/v1\//,
      recorded: false,
      what:
        "any other model API path (GET /v1/models …): forwarded to the OpenAI upstream",
    },
  ],
  prefixes: ["/v1/"],
  match(method, path) {
    if (method === "POST" && path === "/v1/chat/completions") {
      return { path, recorded: true, stream: false, model: null, method: null };
    }
    return path.startsWith("/v1/")
      ? { path, recorded: false, stream: false, model: null, method: null }
      : null;
  },
  upstream: OPENAI_UPSTREAM,
  key: { headers: ["authorization"], query: [] },
  reader: () => openaiChatWire,
  writer: chat,
  history: {
    items: (body) =>
      isObject(body) && Array.isArray(body.messages) ? body.messages : null,
    key: "messages",
  },
  usage: chatUsage,
  others: (a) =>
    isObject(a) && Array.isArray(a.choices) &&
    (a.choices.length > 1 ||
      a.choices.some((c) => isObject(c) && (c.index ?? 0) !== 0)),
  error: openaiError,
  errorOf: typedErrorOf,
};
