/**
 * `POST /ingest`: one canonical event (or a list), validated, sealed and
 * written; 200 `{ok, events: [{capture_id, sequence, event_id,
 * event_hash}]}`. A list is validated whole before anything is written, and
 * each capture's events go in one write.
 *
 * An event may not claim `source.host: "model_gateway"`: the gateway's
 * restore after a restart reads those events as its own record of the
 * conversations (issue 44), so only the gateway writes them. Such an event
 * is refused (422, nothing of its list written) rather than re-attributed:
 * a sender learns its events are not the gateway's instead of finding them
 * stored under another name.
 *
 * Events whose `episode.started` names the file they were imported from
 * (`provenance.file_sha256`) are an import: refused with 409 when the
 * capture holds that file or one of its episodes already, or takes it at
 * this moment (`import_ledger.ts`).
 *
 * @module
 */
import type { TraceEvent, UnsealedEvent } from "../trace/event.ts";
import { EventShapeError, validateEvent } from "../trace/validate.ts";
import { GATEWAY_SOURCE } from "../model_gateway/recorder.ts";
import { importClaims, importDigestOf } from "../importers/import_repeat.ts";
import type { IngestAnswer, IngestRequest } from "./http1/mod.ts";
import { messageOf } from "./error_answer.ts";
import { json } from "./json_answer.ts";
import { byCapture } from "./_handler_helpers.ts";
import type { HandlerContext } from "./handler_types.ts";
import type { Route } from "./route_table.ts";
import { ImportLedger } from "./import_ledger.ts";

/**
 * The `/ingest` route.
 *
 * @param ctx What the handler's routes share.
 * @returns The route.
 */
export function ingestRoute(ctx: HandlerContext): Route {
  // The files imported into each capture: one import of a file.
  const imports = new ImportLedger(ctx.store);
  return {
    method: "POST",
    path: "/ingest",
    family: "ingest",
    auth: "bearer",
    body: "json",
    what: "canonical events, validated, sealed and written",
    handle: (req) => ingest(ctx, imports, req),
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
  imports: ImportLedger,
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
    const ev = ownSource(validateEvent(body), null);
    if (importDigestOf(ev) === null) {
      const sealed = ctx.store.sink(ev.capture_id).emit(ev);
      ctx.stats.events++;
      return json(200, { ok: true, events: [receipt(sealed)] });
    }
  }
  const list: unknown[] = Array.isArray(body) ? body : [body];
  if (list.length === 0) throw new SyntaxError("The event list is empty");
  const valid = list.map((item, i) => ownSource(validateEvent(item), i));
  // An imported file's events: one import of a file per capture, decided
  // here with no wait between the check and the write.
  const claims = importClaims(valid);
  if (claims.length > 0) await imports.ready(claims.map((c) => c.capture));
  const undo = imports.admit(claims);
  const sealed: TraceEvent[] = [];
  try {
    for (const group of byCapture(valid)) sealed.push(...ctx.record(group));
  } catch (err) {
    // A capture's write is whole: the claims of those not written go.
    undo(new Set(sealed.map((ev) => ev.capture_id)));
    throw err;
  }
  return json(200, { ok: true, events: sealed.map(receipt) });
}

/**
 * Refuse an event that claims the model gateway's source.
 *
 * @param ev A valid event.
 * @param index Its place in the list (null for a single event).
 * @returns The event.
 * @throws {EventShapeError} For `source.host: "model_gateway"`.
 */
function ownSource(ev: UnsealedEvent, index: number | null): UnsealedEvent {
  if (ev.source.host !== GATEWAY_SOURCE) return ev;
  throw new EventShapeError(
    "source.host",
    `"${GATEWAY_SOURCE}" is the model gateway's own source (its restore reads those events back) and no event sent to /ingest may claim it${
      index === null ? "" : ` (event ${index} of the list)`
    }: send it with another source.host; nothing was recorded`,
  );
}
