/**
 * The ingest server's request handler, independent of the HTTP
 * listener: `(IngestRequest) => Promise<IngestAnswer>` for the server's own
 * listener, and `(Request) => Promise<Response>` for the fetch API.
 *
 * | route | answer |
 * | --- | --- |
 * | `POST /ingest` | one event object (or a list): 200 `{ok, events: [{capture_id, sequence, event_id, event_hash}]}`; 400 not JSON; 422 not a valid event; 413 too large |
 * | `POST /hook/<host>?cap=<id>` | host_a: 204 (silent for the host); host_b, host_c: 200 `{ok: true, capture_id, events}`; any bad input: 200 `{ok: false, error}` (413 past the size limit) |
 * | `GET /captures` | 200 list of capture records |
 * | `GET /capture/<id>/summary` | 200 inspection (episodes, counts, fidelity, chain); 404 unknown capture |
 * | `/v1/…` (model APIs) | forwarded to the upstream and recorded: see `lib/model_gateway/` |
 * | `POST /v1/traces` | OTLP/HTTP traces (protobuf or JSON, gzip): 200 with the OTLP answer (partial success counts refused spans, those past the caps included); 400 not OTLP; 409 finished capture; 413 too large (gzip unpacked in bounded slices); 415 other types; 422 bad capture id |
 * | `GET /health` | 200 `{ok, root, pid, stats, store}` (`ok: false` when the store's writes fail, `store.error` says why, or when a part in `healthExtra` says so) |
 * | `POST /admin/shutdown` | with the pid file's admin key: 200, then the server stops |
 * | anything else | 404, or 405 with `Allow` for a known path and wrong method |
 *
 * Without `cap`, hook events go to the active capture (the one `capture
 * start` opened), else to the capture `default`.
 *
 * @module
 */
import type { HarnessStore } from "../store/store.ts";
import type { TraceEvent, UnsealedEvent } from "../trace/event.ts";
import { checkJsonShape, validateEvent } from "../trace/validate.ts";
import { validateId } from "../trace/ids.ts";
import { adapterFor } from "../adapters/registry.ts";
import { ToolCallCorrelator } from "../adapters/correlator.ts";
import { SessionMemory } from "../adapters/session_memory.ts";
import { inspectCapture } from "../store/inspect.ts";
import { DEFAULT_MAX_BODY_BYTES } from "./body.ts";
import { fromRequest, toResponse } from "./exchange.ts";
import type { IngestAnswer, IngestRequest } from "./http1/mod.ts";
import {
  errorAnswer,
  json,
  messageOf,
  PayloadTooLargeError,
  statusOf,
} from "./errors.ts";
import { createOtlpIntake } from "./otlp_intake.ts";
import { byCapture, withBytes } from "./_handler_helpers.ts";
import { refusal } from "./_guard.ts";
import { DEFAULT_REDACTION_RULES, redactValue } from "../trace/redact.ts";
import { isModelRoute, ModelGateway } from "../model_gateway/gateway.ts";

export { sameSecret } from "./secret.ts";
import { sameSecret } from "./secret.ts";
export {
  DEFAULT_CAPTURE_ID,
  type IngestHandlerOptions,
  type IngestStats,
} from "./handler_types.ts";
import {
  DEFAULT_CAPTURE_ID,
  type IngestHandlerOptions,
  type IngestStats,
} from "./handler_types.ts";

// Over 80 lines: its routes are closures over one handler's store, limits, redaction and counters.
/**
 * Build the handler over a store (which it only appends to and reads).
 *
 * @param store An open, writable store.
 * @param options Limits, token, capture routing, redaction.
 * @returns The handler and its counters.
 */
export function createIngestHandler(
  store: HarnessStore,
  options: IngestHandlerOptions = {},
): {
  answer: (req: IngestRequest) => Promise<IngestAnswer>;
  handler: (req: Request) => Promise<Response>;
  stats: IngestStats;
  gateway: ModelGateway | null;
} {
  const limit = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const correlator = options.correlator ?? new ToolCallCorrelator();
  const sessions = new SessionMemory();
  // The store's sinks redact every payload before sealing; the handler's
  // rules apply only to a store opened without redaction (no second pass).
  const rules = options.redaction === false || store.redacts
    ? null
    : options.redaction ?? DEFAULT_REDACTION_RULES;
  const stats: IngestStats = {
    requests: 0,
    events: 0,
    rejected_hooks: 0,
    rejected_events: 0,
  };
  const defaultCapture = options.defaultCaptureId ?? DEFAULT_CAPTURE_ID;
  const otlp = createOtlpIntake(store, {
    maxBodyBytes: limit,
    activeCapture: options.activeCapture,
    defaultCaptureId: defaultCapture,
  });

  /** Seal and write events of one capture with one write. */
  function record(events: UnsealedEvent[]): TraceEvent[] {
    if (events.length === 0) return [];
    const sealed = store.sink(events[0].capture_id).emitMany(events);
    stats.events += sealed.length;
    return sealed;
  }

  const gateway = options.modelGateway === false ? null : new ModelGateway({
    store,
    defaultCapture: () => options.activeCapture?.() || defaultCapture,
    maxBodyBytes: limit,
    redact,
  }, options.modelGateway);

  function redact(events: UnsealedEvent[]): UnsealedEvent[] {
    if (!rules) return events;
    return events.map((ev) => {
      const { value, counts } = redactValue(ev.payload, rules);
      if (Object.keys(counts).length === 0) return ev;
      return { ...ev, payload: { ...value, redactions: counts } };
    });
  }

  async function hook(
    req: IngestRequest,
    host: string,
    query: URLSearchParams,
  ): Promise<IngestAnswer> {
    const adapter = adapterFor(host)!;
    try {
      const cap = query.get("cap") || options.activeCapture?.() ||
        defaultCapture;
      validateId("capture", cap);
      const text = await req.text(limit);
      let payload: unknown;
      try {
        payload = JSON.parse(text);
      } catch (err) {
        throw new SyntaxError(
          `The hook body is not JSON (${messageOf(err)})`,
        );
      }
      checkJsonShape(payload);
      const events = adapter(payload, {
        captureId: cap,
        model: options.model ?? null,
        correlator,
        sessions,
        fullModelRequests: options.fullModelRequests,
      });
      const sealed = record(redact(events));
      if (sealed.length > 0) gateway?.observe(sealed[0]);
      if (host === "host_a") return { status: 204, headers: {}, body: null };
      const last = sealed[sealed.length - 1];
      return json(200, {
        ok: true,
        capture_id: cap,
        events: sealed.length,
        // The head this acknowledgement produced: keep it, verify against it.
        ...(last
          ? { head: { sequence: last.sequence, hash: last.event_hash } }
          : {}),
      });
    } catch (err) {
      if (err instanceof PayloadTooLargeError) {
        stats.rejected_hooks++;
        return json(413, { ok: false, error: err.message });
      }
      stats.rejected_hooks++;
      return json(200, { ok: false, error: messageOf(err) });
    }
  }

  async function ingest(req: IngestRequest): Promise<IngestAnswer> {
    try {
      const text = await req.text(limit);
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch (err) {
        throw new SyntaxError(`The body is not JSON (${messageOf(err)})`);
      }
      if (!Array.isArray(body)) {
        // One event: the common case, kept short.
        const ev = validateEvent(body);
        const sealed = store.sink(ev.capture_id).emit(ev);
        stats.events++;
        return json(200, {
          ok: true,
          events: [{
            capture_id: sealed.capture_id,
            sequence: sealed.sequence,
            event_id: sealed.event_id,
            event_hash: sealed.event_hash,
          }],
        });
      }
      const list = body;
      if (list.length === 0) throw new SyntaxError("The event list is empty");
      // Validate all first; each capture's events go in one write.
      const valid = list.map((item) => validateEvent(item));
      const sealed: TraceEvent[] = [];
      for (const group of byCapture(valid)) sealed.push(...record(group));
      return json(200, {
        ok: true,
        events: sealed.map((ev) => ({
          capture_id: ev.capture_id,
          sequence: ev.sequence,
          event_id: ev.event_id,
          event_hash: ev.event_hash,
        })),
      });
    } catch (err) {
      if (statusOf(err) < 500) stats.rejected_events++;
      return errorAnswer(err);
    }
  }

  async function summary(raw: string): Promise<IngestAnswer> {
    try {
      const id = decodeURIComponent(raw);
      validateId("capture", id);
      return json(200, await inspectCapture(store, id));
    } catch (err) {
      return errorAnswer(err);
    }
  }

  let inFlight = 0;
  const maxInFlight = options.maxInFlight ?? 256;

  async function answer(req: IngestRequest): Promise<IngestAnswer> {
    // Past the limit, answer at once rather than pile up work (and handles).
    if (inFlight >= maxInFlight) {
      stats.busy = (stats.busy ?? 0) + 1;
      await req.discard();
      return json(503, {
        ok: false,
        error: "The ingest server is busy: retry shortly",
      }, { "retry-after": "1" });
    }
    inFlight++;
    try {
      return await route(req);
    } catch (err) {
      // Last guard: nothing a client sends may escape as an unexplained 5xx.
      await req.discard();
      return errorAnswer(err);
    } finally {
      inFlight--;
    }
  }

  async function route(req: IngestRequest): Promise<IngestAnswer> {
    stats.requests++;
    const target = req.target;
    const q = target.indexOf("?");
    const path = q < 0 ? target : target.slice(0, q);
    const refused = await refusal(req, path, options);
    if (refused) return refused;
    const method = req.method;
    const only = async (allowed: string) => {
      await req.discard();
      return json(405, {
        ok: false,
        error: `Method ${method} is not allowed on ${path}: use ${allowed}`,
      }, { allow: allowed });
    };
    if (path === "/ingest") {
      return method === "POST" ? await ingest(req) : await only("POST");
    }
    if (gateway && isModelRoute(path)) return await gateway.answer(req, path);
    if (path === "/v1/traces") {
      if (method !== "POST") return await only("POST");
      const a = await otlp.answer(req);
      return a;
    }
    const hookMatch = /^\/hook\/([a-z_]+)$/.exec(path);
    if (hookMatch && adapterFor(hookMatch[1])) {
      return method === "POST"
        ? await hook(
          req,
          hookMatch[1],
          new URLSearchParams(q < 0 ? "" : target.slice(q + 1)),
        )
        : await only("POST");
    }
    if (path === "/captures") {
      if (method !== "GET") return await only("GET");
      return json(200, store.listCaptures());
    }
    const sum = /^\/capture\/([^/]+)\/summary$/.exec(path);
    if (sum) {
      if (method !== "GET") return await only("GET");
      return await summary(sum[1]);
    }
    if (path === "/admin/shutdown" && options.adminKey && options.onShutdown) {
      if (method !== "POST") return await only("POST");
      await req.discard();
      if (
        !sameSecret(
          req.header("x-harness-admin-key") ?? "",
          options.adminKey,
        )
      ) {
        return json(403, { ok: false, error: "Wrong admin key" });
      }
      queueMicrotask(options.onShutdown);
      return json(200, { ok: true, stopping: true });
    }
    if (path === "/health") {
      if (method !== "GET") return await only("GET");
      stats.pending_calls = correlator.size;
      stats.dropped_pending_calls = correlator.dropped;
      const extra = { store: store.health(), ...options.healthExtra?.() };
      // A part that reports `ok: false` (a stalled export) makes it false.
      const healthy = Object.values(extra).every((v) =>
        !(typeof v === "object" && v !== null &&
          (v as { ok?: unknown }).ok === false)
      );
      return json(200, {
        ok: healthy,
        root: store.root,
        pid: Deno.pid,
        stats: { ...stats, ...otlp.stats },
        ...(gateway ? { model_gateway: gateway.stats } : {}),
        ...(store.indexFlushError
          ? { index_flush_error: store.indexFlushError }
          : {}),
        ...extra,
      });
    }
    await req.discard();
    return json(404, { ok: false, error: `No route ${path}` });
  }

  return {
    answer,
    handler: async (req) =>
      toResponse(await answer(withBytes(fromRequest(req), req))),
    stats,
    gateway,
  };
}
