/**
 * `POST /ingest`: one canonical event (or a list), validated, sealed and
 * written; 200 `{ok, events: [{capture_id, sequence, event_id,
 * event_hash}]}`. A list is validated whole before anything is written, and
 * each capture's events go in one write.
 *
 * @module
 */
import type { TraceEvent } from "../trace/event.ts";
import { validateEvent } from "../trace/validate.ts";
import type { IngestAnswer, IngestRequest } from "./http1/mod.ts";
import { json, messageOf } from "./errors.ts";
import { byCapture } from "./_handler_helpers.ts";
import type { HandlerContext } from "./handler_types.ts";
import type { Route } from "./route_table.ts";

/**
 * The `/ingest` route.
 *
 * @param ctx What the handler's routes share.
 * @returns The route.
 */
export function ingestRoute(ctx: HandlerContext): Route {
  return {
    method: "POST",
    path: "/ingest",
    family: "ingest",
    auth: "bearer",
    body: "json",
    what: "canonical events, validated, sealed and written",
    handle: (req) => ingest(ctx, req),
  };
}

function receipt(ev: TraceEvent) {
  return {
    capture_id: ev.capture_id,
    sequence: ev.sequence,
    event_id: ev.event_id,
    event_hash: ev.event_hash,
  };
}

async function ingest(
  ctx: HandlerContext,
  req: IngestRequest,
): Promise<IngestAnswer> {
  const text = await req.text(ctx.limit);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw new SyntaxError(`The body is not JSON (${messageOf(err)})`);
  }
  if (!Array.isArray(body)) {
    // One event: the common case, kept short.
    const ev = validateEvent(body);
    const sealed = ctx.store.sink(ev.capture_id).emit(ev);
    ctx.stats.events++;
    return json(200, { ok: true, events: [receipt(sealed)] });
  }
  if (body.length === 0) throw new SyntaxError("The event list is empty");
  const valid = body.map((item) => validateEvent(item));
  const sealed: TraceEvent[] = [];
  for (const group of byCapture(valid)) sealed.push(...ctx.record(group));
  return json(200, { ok: true, events: sealed.map(receipt) });
}
