/**
 * The server's own read and control routes: `GET /captures` (the capture
 * records), `GET /capture/<id>/summary` (an inspection: episodes, counts,
 * fidelity, chain), `GET /health` (`{ok, root, pid, stats}`, `ok: false`
 * when a part in `healthExtra` says so) and, with an admin key,
 * `POST /admin/shutdown`.
 *
 * @module
 */
import { validateId } from "../trace/ids.ts";
import { inspectCapture } from "../store/inspect.ts";
import type { IngestAnswer } from "./http1/mod.ts";
import { json } from "./json_answer.ts";
import { ForbiddenRequestError } from "./refusals.ts";
import { sameSecret } from "./secret.ts";
import type { HandlerContext } from "./handler_types.ts";
import type { Route } from "./route_table.ts";

/**
 * The read and control routes.
 *
 * @param ctx What the handler's routes share.
 * @returns The routes (`/admin/shutdown` only with `adminKey` and `onShutdown`).
 */
export function controlRoutes(ctx: HandlerContext): Route[] {
  const { store, options } = ctx;
  const routes: Route[] = [
    {
      method: "GET",
      path: "/captures",
      family: "control",
      auth: "bearer",
      body: "any",
      what: "the capture records",
      handle: () => Promise.resolve(json(200, store.listCaptures())),
    },
    {
      method: "GET",
      path: /^\/capture\/([^/]+)\/summary$/,
      family: "control",
      auth: "bearer",
      body: "any",
      what: "a capture's inspection: episodes, counts, fidelity, chain",
      handle: async (_req, { params }) => {
        const id = decodeURIComponent(params[0]);
        validateId("capture", id);
        return json(200, await inspectCapture(store, id));
      },
    },
    {
      method: "GET",
      path: "/health",
      family: "control",
      auth: "bearer",
      body: "any",
      what: "liveness and counters",
      handle: () => Promise.resolve(health(ctx)),
    },
  ];
  const { adminKey, onShutdown } = options;
  if (adminKey && onShutdown) {
    routes.push({
      method: "POST",
      path: "/admin/shutdown",
      family: "control",
      auth: "admin",
      body: "any",
      what: "stop the server (with the pid file's admin key)",
      handle: async (req) => {
        await req.discard();
        if (!sameSecret(req.header("x-harness-admin-key") ?? "", adminKey)) {
          throw new ForbiddenRequestError(
            "Wrong admin key: send the pid file's admin_key in x-harness-admin-key",
          );
        }
        queueMicrotask(onShutdown);
        return json(200, { ok: true, stopping: true });
      },
    });
  }
  return routes;
}

function health(ctx: HandlerContext): IngestAnswer {
  const { store, stats, gateway } = ctx;
  stats.pending_calls = ctx.correlator.size;
  stats.dropped_pending_calls = ctx.correlator.dropped;
  const extra = { store: store.health(), ...ctx.options.healthExtra?.() };
  // A part that reports `ok: false` (a stalled export) makes it false.
  const healthy = Object.values(extra).every((v) =>
    !(typeof v === "object" && v !== null &&
      (v as { ok?: unknown }).ok === false)
  );
  return json(200, {
    ok: healthy,
    root: store.root,
    pid: Deno.pid,
    stats: { ...stats, ...ctx.otlpStats },
    ...(gateway ? { model_gateway: gateway.stats } : {}),
    ...(store.indexFlushError
      ? { index_flush_error: store.indexFlushError }
      : {}),
    ...extra,
  });
}
