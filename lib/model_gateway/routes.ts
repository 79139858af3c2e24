/**
 * The model API routes as the ingest server registers them in its route
 * table (`lib/ingest/route_table.ts`): each is answered by
 * `ModelGateway.answer`, takes the server's token in `x-harness-token`,
 * may stream, and answers its errors in the shape of the API the client
 * speaks ({@linkcode modelApiOf}). The paths are the wires' (the registry,
 * `wires/registry.ts`).
 *
 * @module
 */
import { API_PREFIXES, WIRE_SPECS, wireOf } from "./wires/registry.ts";
import type { WireSpec } from "./wires/wire_spec.ts";

/** One model API route: method, path (exact or pattern) and what it does. */
export interface ModelRouteSpec {
  /** `GET`, `POST`, or `*` (any method, forwarded as it came). */
  readonly method: string;
  /** The exact path, or an anchored pattern. */
  readonly path: string | RegExp;
  /** One line for the docs. */
  readonly what: string;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");

/** Any path under one of the API prefixes (`/v1/traces` and `/v1/v1/` excepted). */
const UNDER_API = new RegExp(
  `^(${API_PREFIXES.map((p) => escape(p)).join("|")})(?!traces$|v1/)`,
);

/**
 * The model API routes, in the order the table tries them: each wire's
 * paths (recorded, then forwarded), then every other path under an API
 * prefix (`/v1/`, `/v1beta/` …; OTLP's `/v1/traces` excepted) and the
 * same under `/p/<package>/`. A path under `/v1/v1/` is none of them: it
 * comes from a base URL with one `/v1` too many (`ANTHROPIC_BASE_URL=…/v1`;
 * the Anthropic SDKs add `/v1` themselves), and rather than reaching the
 * upstream as such (a 404 or 502 there, unrecorded) it is refused with the
 * fix (`baseUrlHint` of `lib/ingest/refusals.ts`).
 */
export const MODEL_ROUTES: readonly ModelRouteSpec[] = [
  ...WIRE_SPECS.flatMap((s) =>
    s.paths.filter((p) => typeof p.path === "string").map((p) => ({
      method: p.method,
      path: p.path,
      what: p.what,
    }))
  ),
  {
    method: "*",
    path: UNDER_API,
    what: `any other model API path: forwarded to the upstream its API names (${
      WIRE_SPECS.flatMap((s) =>
        s.paths.filter((p) => typeof p.path !== "string")
      )
        .map((p) => p.shown).join(", ")
    })`,
  },
  {
    method: "*",
    path: new RegExp(
      `^\\/p\\/[^/]+(${API_PREFIXES.map((p) => escape(p)).join("|")})(?!v1\\/)`,
    ),
    what:
      "the same routes for a package served by name (serve --package NAME=FILE)",
  },
];

/**
 * The package a model route names and the API path under it.
 *
 * @param path `/v1/…`, `/v1beta/…` or `/p/<name>/…`.
 * @returns The package name ("" for the plain path) and the API path.
 */
export function splitModelRoute(path: string): { name: string; api: string } {
  const m = /^\/p\/([^/]+)(\/.*)$/.exec(path);
  if (m && API_PREFIXES.some((p) => m[2].startsWith(p))) {
    return { name: decodeURIComponent(m[1]), api: m[2] };
  }
  return { name: "", api: path };
}

/**
 * The API a model route's client speaks, for the shape of an error the
 * server answers before the gateway does.
 *
 * @param req The request's method and headers.
 * @param path Its path (no query).
 * @returns The wire.
 */
export function modelApiOf(
  req: { readonly method: string; header(name: string): string | null },
  path: string,
): WireSpec {
  const { api } = splitModelRoute(path);
  return wireOf(req.method, api, (h) => req.header(h)).spec;
}
