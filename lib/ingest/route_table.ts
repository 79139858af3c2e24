/**
 * The ingest server's routes as data: each {@linkcode Route} names its
 * method, its path (exact, or a pattern whose groups are its parameters),
 * its family (which decides the shape of its error answers), how it takes
 * the server's token, the bodies it reads, and its handler.
 * {@linkcode RouteTable} finds the route of a request, or says why there is
 * none (404, or 405 with the methods the path takes).
 *
 * @module
 */
import type { IngestAnswer, IngestRequest } from "./http1/mod.ts";
import { MethodNotAllowedError, RouteNotFoundError } from "./refusals.ts";
import type { WireSpec } from "../model_gateway/wires/wire_spec.ts";

/**
 * A route's family: its error answers' shape (`error_answer.ts`) and its
 * counters (`hook` and `ingest` count what they refuse).
 */
export type RouteFamily = "hook" | "ingest" | "control" | "otlp" | "model";

/**
 * How a route takes the server's token (when the server has one):
 * `bearer` in `Authorization`; `model` in `x-harness-token` (the model
 * APIs carry the client's own key in `Authorization`); `admin` either, or
 * the pid file's admin key in `x-harness-admin-key`.
 */
export type RouteAuth = "bearer" | "model" | "admin";

/**
 * The bodies a `POST` route reads: `json` (`application/json`), `otlp`
 * (`application/x-protobuf` or `application/json`), `any` (the route
 * decides; the model APIs forward what they get).
 */
export type RouteBody = "json" | "otlp" | "any";

/** What a handler gets of the matched path. */
export interface RouteMatch {
  /** The path, without the query. */
  path: string;
  /** The query, without `?` ("" when none). */
  query: string;
  /** The pattern's groups, in order (empty for an exact path). */
  params: string[];
}

/** What {@linkcode RouteTable.resolve} finds for a request. */
export interface Resolved {
  /** The route; on a refusal, the path's first route (null for no route). */
  route: Route | null;
  /** The path, query and parameters. */
  match: RouteMatch;
  /** Why no route answers (404, 405), or null. */
  refusal: RouteNotFoundError | MethodNotAllowedError | null;
}

/** One route of the ingest server. */
export interface Route {
  /** `GET`, `POST`, or `*` for any method (forwarded routes). */
  method: string;
  /** The exact path, or a pattern (anchored) whose groups are the parameters. */
  path: string | RegExp;
  /** The family: the shape of its error answers. */
  family: RouteFamily;
  /** How it takes the server's token. */
  auth: RouteAuth;
  /** The bodies it reads on `POST`. */
  body: RouteBody;
  /**
   * For the `model` family: the API whose error shape the client reads.
   * @default () => "openai"
   */
  api?: (
    req: Pick<IngestRequest, "method" | "header">,
    path: string,
  ) => WireSpec;
  /**
   * Its answers may take long (streams): the listener watches the client
   * and lets the handler outlive `handlerTimeoutMs`.
   * @default false
   */
  longRunning?: boolean;
  /** One line for the docs: what it does. */
  what: string;
  /**
   * Answer a request.
   *
   * @param req The request.
   * @param match Its path, query and parameters.
   * @returns The answer.
   * @throws Any error: `errorAnswer` (`error_answer.ts`) answers it in the
   *   family's shape.
   */
  handle(req: IngestRequest, match: RouteMatch): Promise<IngestAnswer>;
}

/** The routes of one server, by exact path first, then by pattern in order. */
export class RouteTable {
  readonly #exact = new Map<string, Route[]>();
  readonly #patterns: Route[] = [];
  /** Every route, in the order given. */
  readonly routes: readonly Route[];

  /**
   * Create a `RouteTable`.
   *
   * @param routes The routes; for one path, the first whose method fits wins.
   */
  constructor(routes: readonly Route[]) {
    this.routes = routes;
    for (const r of routes) {
      if (typeof r.path !== "string") this.#patterns.push(r);
      else {
        const list = this.#exact.get(r.path);
        if (list) list.push(r);
        else this.#exact.set(r.path, [r]);
      }
    }
  }

  /**
   * The routes whose path fits, with their parameters, in order.
   *
   * @param path The path, without the query.
   * @returns Each fitting route and its parameters.
   */
  candidates(path: string): { route: Route; params: string[] }[] {
    const out = (this.#exact.get(path) ?? []).map((route) => ({
      route,
      params: [] as string[],
    }));
    for (const route of this.#patterns) {
      const m = (route.path as RegExp).exec(path);
      if (m) out.push({ route, params: m.slice(1) });
    }
    return out;
  }

  /**
   * The route of a request, or why there is none.
   *
   * @param method The request's method.
   * @param target Its path and query.
   * @returns Its route and match; or, with `refusal` set, the path's first
   *   route (its family shapes the 405; null for a 404).
   */
  resolve(method: string, target: string): Resolved {
    const q = target.indexOf("?");
    const path = q < 0 ? target : target.slice(0, q);
    const match = { path, query: q < 0 ? "" : target.slice(q + 1), params: [] };
    // The common case (an exact path whose method fits) tries no pattern.
    for (const route of this.#exact.get(path) ?? []) {
      if (route.method === "*" || route.method === method) {
        return { route, match, refusal: null };
      }
    }
    const found = this.candidates(path);
    if (found.length === 0) {
      return { route: null, match, refusal: new RouteNotFoundError(path) };
    }
    for (const { route, params } of found) {
      if (route.method === "*" || route.method === method) {
        return { route, match: { ...match, params }, refusal: null };
      }
    }
    const allow = [...new Set(found.map((f) => f.route.method))];
    return {
      route: found[0].route,
      match,
      refusal: new MethodNotAllowedError({ method, path, allow }),
    };
  }

  /**
   * The route of a request.
   *
   * @param method The request's method.
   * @param target Its path and query.
   * @returns The route and its match.
   * @throws {RouteNotFoundError} When no route has the path.
   * @throws {MethodNotAllowedError} When the path's routes take other methods.
   */
  find(method: string, target: string): { route: Route; match: RouteMatch } {
    const r = this.resolve(method, target);
    if (r.refusal) throw r.refusal;
    return { route: r.route!, match: r.match };
  }

  /**
   * Whether a request's route may take long (the listener's `longRunning`).
   *
   * @param method The request's method.
   * @param target Its path and query.
   * @returns True for a route marked `longRunning`; false for none.
   */
  longRunning(method: string, target: string): boolean {
    const r = this.resolve(method, target);
    return r.refusal === null && r.route?.longRunning === true;
  }
}
