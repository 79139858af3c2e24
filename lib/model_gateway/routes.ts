/**
 * The model API routes as the ingest server registers them in its route
 * table (`lib/ingest/route_table.ts`): each is answered by
 * `ModelGateway.answer`, takes the server's token in
 * `x-harness-token`, may stream, and answers its errors in the shape of the
 * API the client speaks ({@linkcode modelApiOf}).
 *
 * @module
 */
import type { ApiFamily } from "./api_errors.ts";
import { splitModelRoute } from "./gateway.ts";

/** One model API route: method, path (exact or pattern) and what it does. */
export interface ModelRouteSpec {
  /** `GET`, `POST`, or `*` (any method, forwarded as it came). */
  readonly method: string;
  /** The exact path, or an anchored pattern. */
  readonly path: string | RegExp;
  /** One line for the docs. */
  readonly what: string;
}

/**
 * The model API routes, in the order the table tries them: the recorded
 * wires, the forwarded reads, then every other path under `/v1/` (OTLP's
 * `/v1/traces` excepted) and under `/p/<package>/v1/`. A path under
 * `/v1/v1/` is none of them: it comes from a base URL with one `/v1` too
 * many (`ANTHROPIC_BASE_URL=…/v1`; the Anthropic SDKs add `/v1`
 * themselves), and rather than reaching the upstream as such (a 404 or 502
 * there, unrecorded) it is refused with the fix (`baseUrlHint` of
 * `lib/ingest/refusals.ts`).
 */
export const MODEL_ROUTES: readonly ModelRouteSpec[] = [
  {
    method: "POST",
    path: "/v1/chat/completions",
    what: "OpenAI Chat Completions: forwarded (or served) and recorded",
  },
  {
    method: "POST",
    path: "/v1/responses",
    what: "OpenAI Responses: forwarded (or served) and recorded",
  },
  {
    method: "POST",
    path: "/v1/messages",
    what: "Anthropic Messages: forwarded (or served) and recorded",
  },
  {
    method: "POST",
    path: "/v1/messages/count_tokens",
    what: "Anthropic token counting: forwarded",
  },
  {
    method: "GET",
    path: "/v1/models",
    what: "the upstream's models: forwarded",
  },
  {
    method: "*",
    path: /^\/v1\/(?!traces$|v1\/)/,
    what: "any other model API path: forwarded to the upstream its API names",
  },
  {
    method: "*",
    path: /^\/p\/[^/]+\/v1\/(?!v1\/)/,
    what:
      "the same routes for a package served by name (serve --package NAME=FILE)",
  },
];

/** The POST paths of the recorded wires, by their API. */
const WIRE_APIS: Record<string, ApiFamily> = {
  "/v1/chat/completions": "openai",
  "/v1/responses": "openai",
  "/v1/messages": "anthropic",
};

/**
 * The API a model route's client speaks, for the shape of an error the
 * server answers before the gateway does: the wire of a recorded route,
 * else Anthropic for `/v1/messages…` or a request carrying
 * `anthropic-version` or `x-api-key`, else OpenAI.
 *
 * @param req The request's method and headers.
 * @param path Its path (no query).
 * @returns The API.
 */
export function modelApiOf(
  req: { readonly method: string; header(name: string): string | null },
  path: string,
): ApiFamily {
  const { api } = splitModelRoute(path);
  if (req.method === "POST" && api in WIRE_APIS) return WIRE_APIS[api];
  return api.startsWith("/v1/messages") ||
      req.header("anthropic-version") !== null ||
      req.header("x-api-key") !== null
    ? "anthropic"
    : "openai";
}
