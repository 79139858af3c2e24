/**
 * The OpenAI Responses API as one wire ({@linkcode openaiResponsesWireSpec}):
 * `POST /v1/responses` recorded; OpenAI's upstream and error shape. An
 * answer's id continues its conversation upstream (`previous_response_id`).
 *
 * @module
 */
import type { WireSpec } from "../wire_spec.ts";
import { isObject } from "../../wire_types.ts";
import { OPENAI_UPSTREAM } from "../openai_chat/mod.ts";
import { openaiError, typedErrorOf } from "../openai_chat/errors.ts";
import { openaiResponsesWire, usageOf } from "./read.ts";
import { responses } from "./write.ts";

/** OpenAI Responses. */
export const openaiResponsesWireSpec: WireSpec = {
  wire: "openai_responses",
  title: "OpenAI Responses",
  paths: [{
    method: "POST",
    shown: "/v1/responses",
    path: "/v1/responses",
    recorded: true,
    what: "OpenAI Responses: forwarded (or served) and recorded",
  }],
  prefixes: ["/v1/"],
  match: (method, path) =>
    method === "POST" && path === "/v1/responses"
      ? { path, recorded: true, stream: false, model: null, method: null }
      : null,
  upstream: OPENAI_UPSTREAM,
  key: { headers: ["authorization"], query: [] },
  reader: () => openaiResponsesWire,
  writer: responses,
  history: {
    items: (body) =>
      !isObject(body)
        ? null
        : typeof body.input === "string"
        ? [body.input]
        : Array.isArray(body.input)
        ? body.input
        : null,
    key: "input",
  },
  usage: usageOf,
  error: openaiError,
  errorOf: typedErrorOf,
  continues_by_id: true,
};
