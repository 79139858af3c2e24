/**
 * The registry of wires: every model API the gateway speaks, one line each
 * ({@linkcode WIRE_SPECS}, in the order a request's path is tried: the
 * OpenAI catch-all of `/v1/…` last). The route table, the upstreams (the
 * stats, `/health`, `serve`'s flags and environment names, the network
 * grant `deno task serve` asks `ingest.ts gateway net` for), the recorder
 * and the installers read it; nothing else names a wire
 * (`tests/model_gateway/wire_registry_test.ts` holds that).
 *
 * @module
 */
import type { WireRoute, WireSpec, WireUpstream } from "./wire_spec.ts";
import { geminiWire } from "./gemini/mod.ts";
import { anthropicMessagesWireSpec } from "./anthropic_messages/mod.ts";
import { openaiResponsesWireSpec } from "./openai_responses/mod.ts";
import { openaiChatWireSpec } from "./openai_chat/mod.ts";

/** The wires, in the order a request's path is tried. */
export const WIRE_SPECS: readonly WireSpec[] = [
  geminiWire,
  anthropicMessagesWireSpec,
  openaiResponsesWireSpec,
  openaiChatWireSpec,
];

/**
 * The upstreams the wires go to, each once (wires of one provider share
 * one), the last wire's first: the wire a new one adds goes first in
 * {@linkcode WIRE_SPECS} (its paths tried first) and its upstream last here
 * (flags, `/health`, the serve banner).
 */
export const UPSTREAMS: readonly WireUpstream[] = [
  ...new Map(
    [...WIRE_SPECS].reverse().map((s) => [s.upstream.name, s.upstream]),
  ).values(),
];

/** A request's wire and how its path reads. */
export interface WireMatch {
  /** The wire. */
  spec: WireSpec;
  /** Its route. */
  route: WireRoute;
}

/**
 * The wire a request is, by its method, path and headers: the wire whose
 * recorded route it is, else the first whose forwarded paths take it (in
 * {@linkcode WIRE_SPECS}' order: a header a client of one API sends does not
 * take another API's recorded path), else the last wire's (OpenAI's,
 * forwarded).
 *
 * @param method HTTP method.
 * @param path The API path (no query, no `/p/<name>` prefix).
 * @param header One request header.
 * @returns The wire and its route.
 */
export function wireOf(
  method: string,
  path: string,
  header: (name: string) => string | null,
): WireMatch {
  let forwarded: WireMatch | null = null;
  for (const spec of WIRE_SPECS) {
    const route = spec.match(method, path, header);
    if (route?.recorded) return { spec, route };
    if (route && forwarded === null) forwarded = { spec, route };
  }
  if (forwarded) return forwarded;
  const spec = WIRE_SPECS[WIRE_SPECS.length - 1];
  return {
    spec,
    route: { path, recorded: false, stream: false, model: null, method: null },
  };
}

/**
 * The spec of a recorded wire, by the name its events carry.
 *
 * @param wire `model.requested.payload.request.wire`, `source.adapter`.
 * @returns The spec, or null.
 */
export function specOfWire(wire: string): WireSpec | null {
  return WIRE_SPECS.find((s) => s.wire === wire) ?? null;
}

/**
 * The environment variable an upstream is read from.
 *
 * @param u The upstream.
 * @returns `HARNESS_UPSTREAM_<NAME>`.
 */
export function upstreamEnv(u: WireUpstream): string {
  return `HARNESS_UPSTREAM_${u.name.toUpperCase()}`;
}

/**
 * The `serve` flag an upstream is set with.
 *
 * @param u The upstream.
 * @returns `upstream-<name>` (without the dashes in front).
 */
export function upstreamFlag(u: WireUpstream): string {
  return `upstream-${u.name}`;
}

/** The API path prefixes the model routes answer under (`/v1/` …), each once. */
export const API_PREFIXES: readonly string[] = [
  ...new Set(WIRE_SPECS.flatMap((s) => s.prefixes)),
];
