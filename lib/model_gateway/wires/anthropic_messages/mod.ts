/**
 * Anthropic Messages as one wire ({@linkcode anthropicMessagesWireSpec}):
 * `POST /v1/messages` recorded; `POST /v1/messages/count_tokens`, and any
 * other `/v1/…` path that carries `anthropic-version` or `x-api-key`,
 * forwarded to the Anthropic upstream (written as the Anthropic SDK's base
 * URL, without `/v1`).
 *
 * @module
 */
import type { WireSpec } from "../wire_spec.ts";
import { isObject } from "../../wire_types.ts";
import { typedErrorOf } from "../openai_chat/errors.ts";
import { anthropicError } from "./errors.ts";
import { anthropicMessagesWire, usageOf } from "./read.ts";
import { messages } from "./write.ts";

/** Anthropic Messages. */
export const anthropicMessagesWireSpec: WireSpec = {
  wire: "anthropic_messages",
  title: "Anthropic Messages",
  paths: [
    {
      method: "POST",
      shown: "/v1/messages",
      path: "/v1/messages",
      recorded: true,
      what: "Anthropic Messages: forwarded (or served) and recorded",
    },
    {
      method: "POST",
      shown: "/v1/messages/count_tokens",
      path: "/v1/messages/count_tokens",
      recorded: false,
      what: "Anthropic token counting: forwarded",
    },
  ],
  prefixes: ["/v1/"],
  match(method, path, header) {
    if (method === "POST" && path === "/v1/messages") {
      return { path, recorded: true, stream: false, model: null, method: null };
    }
    return path.startsWith("/v1/messages") ||
        (path.startsWith("/v1/") &&
          (header("anthropic-version") !== null ||
            header("x-api-key") !== null))
      ? { path, recorded: false, stream: false, model: null, method: null }
      : null;
  },
  upstream: {
    name: "anthropic",
    default: "https://api.anthropic.com",
    strip: "",
    title: "Anthropic",
    sdk_env: "ANTHROPIC_BASE_URL",
    sdk_path: "",
  },
  key: { headers: ["x-api-key", "authorization"], query: [] },
  reader: () => anthropicMessagesWire,
  writer: messages,
  history: {
    items: (body) =>
      isObject(body) && Array.isArray(body.messages) ? body.messages : null,
    key: "messages",
  },
  usage: usageOf,
  error: anthropicError,
  errorOf: typedErrorOf,
};
