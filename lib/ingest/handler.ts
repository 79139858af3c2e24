/**
 * The ingest server's request handler, independent of the HTTP
 * listener: `(IngestRequest) => Promise<IngestAnswer>` for the server's own
 * listener, and `(Request) => Promise<Response>` for the fetch API.
 *
 * Its routes are one {@linkcode RouteTable} (`route_table.ts`), built here
 * from the route files: the hooks (`hook_routes.ts`), `/ingest`
 * (`ingest_route.ts`), OTLP (`otlp_intake.ts`), the read and control routes
 * (`control_routes.ts`) and the model APIs (`lib/model_gateway/routes.ts`).
 * A request is found in the table, checked (`guards.ts`), then answered by
 * its route; whatever any step throws (the model gateway's own errors
 * included) is answered by `errorAnswer` (`error_answer.ts`) in the shape
 * of the route's family. The table:
 *
 * | route | family | answer |
 * | --- | --- | --- |
 * | `POST /hook/<host>?cap=<id>` | hook | host_a 204; host_b, host_c 200 `{ok: true, capture_id, events}` |
 * | `POST /ingest` | ingest | 200 `{ok, events: [{capture_id, sequence, event_id, event_hash}]}` |
 * | `POST /v1/traces` | otlp | OTLP/HTTP traces (protobuf or JSON, gzip): 200, partial success for refused spans |
 * | `GET /captures` | control | 200 list of capture records |
 * | `GET /capture/<id>/summary` | control | 200 inspection (episodes, counts, fidelity, chain) |
 * | `GET /health` | control | 200 `{ok, root, pid, stats, store}` (`ok: false` while store writes fail) |
 * | `POST /admin/shutdown` | control | with the pid file's admin key: 200, then the server stops |
 * | `/v1/…`, `/p/<name>/v1/…` | model | forwarded to the upstream and recorded: `lib/model_gateway/` |
 *
 * Anything else is 404, or 405 with `Allow` for a known path and a wrong
 * method; past `maxInFlight` requests, 503 with `Retry-After`.
 *
 * @module
 */
import type { HarnessStore } from "../store/store.ts";
import type { TraceEvent, UnsealedEvent } from "../trace/event.ts";
import { ToolCallCorrelator } from "../adapters/correlator.ts";
import { SessionMemory } from "../adapters/session_memory.ts";
import {
  DEFAULT_REDACTION_RULES,
  redactionSet,
  redactValue,
} from "../trace/redact.ts";
import { ModelGateway } from "../model_gateway/gateway.ts";
import { MODEL_ROUTES, modelApiOf } from "../model_gateway/routes.ts";
import { DEFAULT_MAX_BODY_BYTES } from "./body.ts";
import { fromRequest, toResponse } from "./exchange.ts";
import type { IngestAnswer, IngestRequest } from "./http1/mod.ts";
import { errorAnswer, type ErrorShape, statusOf } from "./error_answer.ts";
import { createOtlpIntake } from "./otlp_intake.ts";
import { withBytes } from "./_handler_helpers.ts";
import { checkRequest } from "./guards.ts";
import { isModelApiPath, ServerBusyError } from "./refusals.ts";
import { type Route, RouteTable } from "./route_table.ts";
import { hookRoutes } from "./hook_routes.ts";
import { ingestRoute } from "./ingest_route.ts";
import { controlRoutes } from "./control_routes.ts";
import {
  DEFAULT_CAPTURE_ID,
  type HandlerContext,
  type IngestHandlerOptions,
  type IngestStats,
} from "./handler_types.ts";

/** What {@linkcode createIngestHandler} builds. */
export interface IngestHandler {
  /** Answer a request of the server's own listener. */
  answer: (req: IngestRequest) => Promise<IngestAnswer>;
  /** Answer a fetch API request. */
  handler: (req: Request) => Promise<Response>;
  /** The counters `/health` shows. */
  stats: IngestStats;
  /** The model API routes (null when turned off). */
  gateway: ModelGateway | null;
  /** Every route, as the handler finds them. */
  table: RouteTable;
}

/**
 * Build the handler over a store (which it only appends to and reads).
 *
 * @param store An open, writable store.
 * @param options Limits, token, capture routing, redaction.
 * @returns The handler, its counters and its route table.
 */
export function createIngestHandler(
  store: HarnessStore,
  options: IngestHandlerOptions = {},
): IngestHandler {
  const ctx = handlerContext(store, options);
  const table = new RouteTable(routesOf(ctx));
  const maxInFlight = options.maxInFlight ?? 256;
  let inFlight = 0;

  async function answer(req: IngestRequest): Promise<IngestAnswer> {
    const { route, match, refusal } = table.resolve(req.method, req.target);
    let taken = false;
    try {
      // Past the limit, answer at once rather than pile up work (and handles).
      if (inFlight >= maxInFlight) {
        ctx.stats.busy = (ctx.stats.busy ?? 0) + 1;
        throw new ServerBusyError();
      }
      ctx.stats.requests++;
      checkRequest(req, { route, options });
      if (refusal) throw refusal;
      taken = true;
      inFlight++;
      try {
        return await route!.handle(req, match);
      } finally {
        inFlight--;
      }
    } catch (err) {
      // Nothing a client sends escapes as an unexplained 5xx.
      await req.discard();
      if (taken) countRefused(ctx, route!, err);
      return errorAnswer(err, errorShapeOf(route, { req, path: match.path }));
    }
  }

  return {
    answer,
    handler: async (req) =>
      toResponse(await answer(withBytes(fromRequest(req), req))),
    stats: ctx.stats,
    gateway: ctx.gateway,
    table,
  };
}

/** The routes of one handler, in the order the table tries them. */
function routesOf(ctx: HandlerContext & { otlp: OtlpAnswer }): Route[] {
  const routes: Route[] = [
    ...hookRoutes(ctx),
    ingestRoute(ctx),
    {
      method: "POST",
      path: "/v1/traces",
      family: "otlp",
      auth: "bearer",
      body: "otlp",
      what: "OTLP/HTTP traces (protobuf or JSON, gzip), mapped to events",
      handle: (req) => ctx.otlp(req),
    },
    ...controlRoutes(ctx),
  ];
  const gateway = ctx.gateway;
  if (gateway) {
    for (const spec of MODEL_ROUTES) {
      routes.push({
        ...spec,
        family: "model",
        auth: "model",
        body: "any",
        longRunning: true,
        api: modelApiOf,
        handle: async (req, match) => {
          // The gateway's conversations are restored first (issue 44).
          await ctx.afterRestore("model");
          return await gateway.answer(req, match.path);
        },
      });
    }
  }
  return routes;
}

/**
 * The error shape of a route's family (the server's own without a route).
 *
 * @param route The request's route, or null.
 * @param at `req`: the request (method and headers: a model route's API may
 *   depend on them); `path`: its path.
 * @returns The shape its errors take.
 */
export function errorShapeOf(
  route: Route | null,
  { req, path }: {
    req: Pick<IngestRequest, "method" | "header">;
    path: string;
  },
): ErrorShape {
  // A model API path sent to a base URL with its /v1 wrong: the client is
  // an SDK, so the refusal (with its hint) comes in that API's own shape.
  if (!route && isModelApiPath(path)) {
    return { family: "model", api: modelApiOf(req, path) };
  }
  if (!route || route.family === "ingest") return { family: "control" };
  if (route.family === "model") {
    return {
      family: "model",
      api: route.api?.(req, path) ?? modelApiOf(req, path),
    };
  }
  return { family: route.family };
}

/** Count what a route refused: hooks all, `/ingest` the client's (4xx). */
function countRefused(ctx: HandlerContext, route: Route, err: unknown): void {
  if (route.family === "hook") ctx.stats.rejected_hooks++;
  else if (route.family === "ingest" && statusOf(err) < 500) {
    ctx.stats.rejected_events++;
  }
}

/** The OTLP route's answer function. */
type OtlpAnswer = (req: IngestRequest) => Promise<IngestAnswer>;

/** What the routes share, the OTLP intake's answer included. */
function handlerContext(
  store: HarnessStore,
  options: IngestHandlerOptions,
): HandlerContext & { otlp: OtlpAnswer } {
  const limit = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const defaultCapture = options.defaultCaptureId ?? DEFAULT_CAPTURE_ID;
  // The store's sinks redact every payload before sealing; the handler's
  // rules apply only to a store opened without redaction (no second pass).
  const rules = options.redaction === false || store.redacts
    ? null
    : redactionSet(options.redaction ?? DEFAULT_REDACTION_RULES);
  const stats: IngestStats = {
    requests: 0,
    events: 0,
    rejected_hooks: 0,
    rejected_events: 0,
  };
  const redact = (events: UnsealedEvent[]): UnsealedEvent[] => {
    if (!rules) return events;
    return events.map((ev) => {
      const { value, counts } = redactValue(ev.payload, rules);
      if (Object.keys(counts).length === 0) return ev;
      return { ...ev, payload: { ...value, redactions: counts } };
    });
  };
  const record = (events: UnsealedEvent[]): TraceEvent[] => {
    if (events.length === 0) return [];
    const sealed = store.sink(events[0].capture_id).emitMany(events);
    stats.events += sealed.length;
    return sealed;
  };
  const otlp = createOtlpIntake(store, {
    maxBodyBytes: limit,
    activeCapture: options.activeCapture,
    defaultCaptureId: defaultCapture,
  });
  const gateway = options.modelGateway === false ? null : new ModelGateway({
    store,
    defaultCapture: () => options.activeCapture?.() || defaultCapture,
    maxBodyBytes: limit,
    redact,
  }, options.modelGateway);
  // Hooks and model calls that come during the restore wait for it.
  const waits: Record<"hooks" | "model", Promise<unknown> | null> = {
    hooks: options.restored?.hooks ?? null,
    model: options.restored?.model ?? null,
  };
  for (const k of ["hooks", "model"] as const) {
    const done = () => waits[k] = null;
    waits[k]?.then(done, done);
  }
  const afterRestore = async (route: "hooks" | "model"): Promise<boolean> => {
    const wait = waits[route];
    if (wait === null) return false;
    stats.held_for_restore = (stats.held_for_restore ?? 0) + 1;
    try {
      await wait.catch(() => {});
    } finally {
      stats.held_for_restore = (stats.held_for_restore ?? 1) - 1;
    }
    return true;
  };
  return {
    store,
    options,
    limit,
    stats,
    afterRestore,
    correlator: options.correlator ?? new ToolCallCorrelator(),
    sessions: options.sessions ?? new SessionMemory(),
    defaultCapture,
    gateway,
    otlpStats: otlp.stats,
    redact,
    record,
    otlp: (req) => otlp.answer(req),
  };
}
