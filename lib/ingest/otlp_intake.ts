/**
 * `POST /v1/traces`: OTLP/HTTP traces in (`application/x-protobuf` or
 * `application/json`, optionally gzip), mapped as `import --format otlp`
 * maps a file (`mapOtlp`) into a capture chosen by the
 * `x-harness-capture` header, else the resource attribute
 * `harness.capture_id`, else the active capture, else `default`. Event ids
 * are derived from trace and span ids, and ids already in the capture are
 * skipped, so spans sent twice are stored once. Spans with invalid ids are
 * refused one by one and counted in the OTLP partial-success answer.
 *
 * Bounded: a gzip body is unpacked a slice at a time up to the body limit
 * (`bounded_gunzip.ts`); a request takes at most 10,000 spans and 200,000
 * attributes (1,024 on one span), the rest refused in the partial success
 * with the cap named (`lib/otel/bounded_caps.ts`); and unpacking,
 * decoding, mapping and storing run in slices of a few ms with a turn of
 * the event loop between them (`lib/otel/bounded_steps.ts`), so every other
 * route answers meanwhile. OTLP requests are worked one at a time, in the
 * order their bodies arrived. Errors are thrown and answered as on every
 * route (`error_answer.ts`, in OTLP's shape): 409 for a finished capture, 413 too
 * large, 415 an encoding other than gzip, 422 a bad capture id, 400 a body
 * that is not OTLP.
 *
 * @module
 */
import type { HarnessStore } from "../store/store.ts";
import type { UnsealedEvent } from "../trace/event.ts";
import { validateId } from "../trace/ids.ts";
import { type MapOtlpResult, mapOtlpSteps } from "../otel/import.ts";
import type { OtlpTraces } from "../otel/otlp_types.ts";
import type { BoundedOtlp, OtlpLimits } from "../otel/bounded_caps.ts";
import { readOtlpSteps } from "../otel/bounded_decode.ts";
import { TimeSlicer } from "../otel/bounded_steps.ts";
import type { IngestAnswer, IngestRequest } from "./http1/mod.ts";
import { messageOf, statusOf } from "./error_answer.ts";
import { json } from "./json_answer.ts";
import { UnsupportedMediaTypeError } from "./refusals.ts";
import { gunzipBounded } from "./bounded_gunzip.ts";

/** Options of {@linkcode createOtlpIntake}. */
export interface OtlpIntakeOptions {
  /** Largest body (and largest gunzipped body), in bytes. */
  maxBodyBytes: number;
  /** The active capture, asked per request. @default () => null */
  activeCapture?: () => string | null;
  /** Capture when nothing else names one. @default "default" */
  defaultCaptureId?: string;
  /**
   * Caps on spans and attributes per request.
   * @default the `DEFAULT_MAX_OTLP_*` caps of `lib/otel/bounded_caps.ts`
   */
  limits?: OtlpLimits;
  /**
   * Most time a request's work holds the event loop at once, in ms.
   * @default DEFAULT_SLICE_MS (5)
   */
  sliceMs?: number;
}

/** Counters of the intake (on `/health` under `stats`). */
export interface OtlpIntakeStats {
  /** Spans mapped and stored (or already stored). */
  otlp_spans: number;
  /** Spans refused (invalid ids, past a cap). */
  otlp_rejected_spans: number;
  /** Events skipped because the capture had them (repeated sends). */
  otlp_duplicate_events: number;
}

/** A request's resource (its attributes may name the capture). */
type OtlpResource = OtlpTraces["resourceSpans"][number]["resource"];

/** Trace ids remembered per capture (their episode), before forgetting. */
const TRACES_KEPT = 100_000;

/** Events stored at once (~1 ms), between turns of the event loop. */
const EMIT_BATCH = 128;

/** A request body as bytes, when the request can give them. */
type WithBytes = IngestRequest & {
  bytes?: (limit: number) => Promise<Uint8Array>;
};

async function body(req: WithBytes, limit: number): Promise<Uint8Array> {
  if (typeof req.bytes === "function") return await req.bytes(limit);
  // A listener that only gives text: JSON without compression only.
  return new TextEncoder().encode(await req.text(limit));
}

/** `n` as a protobuf varint. */
function varint(n: number): number[] {
  const out: number[] = [];
  for (; n >= 128; n = Math.floor(n / 128)) out.push((n % 128) | 0x80);
  out.push(n);
  return out;
}

/**
 * The OTLP protobuf answer: an `ExportTraceServiceResponse` whose
 * `partial_success` (field 1) holds `rejected_spans` (1) and
 * `error_message` (2); empty when nothing was refused.
 */
function protobufAnswer(rejected: number, message: string): Uint8Array {
  if (rejected === 0) return new Uint8Array();
  const text = new TextEncoder().encode(message);
  const inner = [0x08, ...varint(rejected), 0x12, ...varint(text.length)];
  const head = [0x0a, ...varint(inner.length + text.length), ...inner];
  const out = new Uint8Array(head.length + text.length);
  out.set(head);
  out.set(text, head.length);
  return out;
}

/** The OTLP answer: partial success when spans were refused, as protobuf or JSON. */
function reply(
  rejected: number,
  message: string,
  protobuf: boolean,
): IngestAnswer {
  if (protobuf) {
    return {
      status: 200,
      headers: { "content-type": "application/x-protobuf" },
      body: null,
      raw: protobufAnswer(rejected, message),
    };
  }
  return json(
    200,
    rejected
      ? {
        partialSuccess: {
          rejectedSpans: String(rejected),
          errorMessage: message,
        },
      }
      : {},
  );
}

/**
 * The error for a body that cannot be read: 413 and 422 as they are,
 * anything else a body that is not OTLP (400).
 */
function readFailed(err: unknown): Error {
  const status = statusOf(err);
  if (status === 413 || status === 422) return err as Error;
  return new SyntaxError(`Not an OTLP traces request (${messageOf(err)})`, {
    cause: err,
  });
}

/**
 * Build the route.
 *
 * @param harness The store it appends to.
 * @param options Body limit and capture routing.
 * @returns The route: its answer function and its counters.
 */
export function createOtlpIntake(
  harness: HarnessStore,
  options: OtlpIntakeOptions,
): OtlpIntake {
  return new OtlpIntake(harness, options);
}

/**
 * The OTLP route over one store: its counters, the event ids each capture
 * holds (so spans sent twice are stored once), the episode each trace went
 * to, and the queue that works requests one at a time.
 */
export class OtlpIntake {
  /** Counters (on `/health` under `stats`). */
  readonly stats: OtlpIntakeStats = {
    otlp_spans: 0,
    otlp_rejected_spans: 0,
    otlp_duplicate_events: 0,
  };
  readonly #harness: HarnessStore;
  readonly #options: OtlpIntakeOptions;
  readonly #seen = new Map<string, Set<string>>();
  readonly #episodes = new Map<string, Map<string, string>>();
  /** The work of the requests taken so far (see `#oneAtATime`). */
  #queue: Promise<unknown> = Promise.resolve();

  /**
   * Create a `OtlpIntake`.
   *
   * @param harness The store it appends to.
   * @param options Body limit and capture routing.
   */
  constructor(harness: HarnessStore, options: OtlpIntakeOptions) {
    this.#harness = harness;
    this.#options = options;
  }

  /**
   * Answer one `POST /v1/traces`.
   *
   * @param req The request.
   * @returns The OTLP answer (partial success when spans were refused).
   * @throws {SyntaxError} When the body is not OTLP (400).
   * @throws {PayloadTooLargeError} Past the body limit, gzipped or not (413).
   * @throws {UnsupportedMediaTypeError} For an encoding other than gzip (415).
   * @throws {InvalidIdError} For a capture id that is not one (422).
   * @throws {CaptureFinishedError} For a finished capture (409).
   */
  async answer(req: IngestRequest): Promise<IngestAnswer> {
    const type = (req.header("content-type") ?? "").split(";")[0].trim()
      .toLowerCase();
    const protobuf = type === "application/x-protobuf";
    let bytes: Uint8Array;
    try {
      bytes = await body(req as WithBytes, this.#options.maxBodyBytes);
    } catch (err) {
      throw readFailed(err);
    }
    const encoding = (req.header("content-encoding") ?? "").toLowerCase();
    if (encoding && encoding !== "gzip" && encoding !== "identity") {
      throw new UnsupportedMediaTypeError(
        `Content-Encoding ${encoding} is not supported: send gzip or none`,
      );
    }
    return await this.#oneAtATime(() =>
      this.#work(req, { bytes, gzip: encoding === "gzip", protobuf })
    );
  }

  /**
   * Run requests' work one at a time, in the order their bodies arrived:
   * the spans of one trace sent in several requests (an exporter that
   * sends each span as it ends) get the episode the first request chose,
   * as when each request was one synchronous step.
   */
  #oneAtATime<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(work);
    this.#queue = run.catch(() => {});
    return run;
  }

  /** Unpack, read, map and store one request, in slices. */
  async #work(
    req: IngestRequest,
    body: { bytes: Uint8Array; gzip: boolean; protobuf: boolean },
  ): Promise<IngestAnswer> {
    const slicer = new TimeSlicer({ sliceMs: this.#options.sliceMs });
    let bytes = body.bytes;
    let read: BoundedOtlp;
    try {
      if (body.gzip) {
        bytes = await gunzipBounded(bytes, this.#options.maxBodyBytes, {
          pause: () => slicer.pause(),
        });
      }
      read = await slicer.run(readOtlpSteps(bytes, this.#options.limits));
    } catch (err) {
      throw readFailed(err);
    }
    const { rejected, message } = await this.#record(req, { read, slicer });
    return reply(rejected, message, body.protobuf);
  }

  /** The capture a resource's spans go to (validated). */
  #captureOf(req: IngestRequest, resource: OtlpResource): string {
    const header = req.header("x-harness-capture");
    const list = resource?.attributes;
    const attr = Array.isArray(list)
      ? list.find((a) => a?.key === "harness.capture_id")
      : undefined;
    const value = attr?.value as { stringValue?: unknown } | undefined;
    const fromAttr = typeof value?.stringValue === "string"
      ? value.stringValue
      : null;
    return validateId(
      "capture",
      header || fromAttr || this.#options.activeCapture?.() ||
        this.#options.defaultCaptureId || "default",
    );
  }

  /**
   * Map and store one trace after another (what a request holds at once
   * is one trace's spans and events); say what was refused. A trace that
   * cannot be decoded or mapped is refused, not the request.
   */
  async #record(
    req: IngestRequest,
    { read, slicer }: { read: BoundedOtlp; slicer: TimeSlicer },
  ): Promise<{ rejected: number; message: string }> {
    const stats = this.stats;
    let rejected = 0;
    const reasons: string[] = [];
    const refuse = (count: number, reason: string) => {
      rejected += count;
      stats.otlp_rejected_spans += count;
      if (reasons.length < 6) reasons.push(reason);
    };
    for (const r of read.refused) refuse(r.count, `${r.count} ${r.reason}`);
    // Every capture is named before anything is stored (a bad id is 422).
    const named = new Map<OtlpResource, string>();
    for (const t of read.traces) {
      if (!named.has(t.resource)) {
        named.set(t.resource, this.#captureOf(req, t.resource));
      }
    }
    for (const trace of read.traces) {
      const cap = named.get(trace.resource)!;
      let byTrace = this.#episodes.get(cap);
      if (!byTrace) this.#episodes.set(cap, byTrace = new Map());
      if (byTrace.size > TRACES_KEPT) byTrace.clear();
      let mapped: MapOtlpResult;
      try {
        const spans = await slicer.run(trace.spans());
        mapped = await slicer.run(mapOtlpSteps({
          resourceSpans: [{
            resource: trace.resource,
            scopeSpans: [{ scope: { name: "", version: "" }, spans }],
          }],
        }, {
          captureId: cap,
          partial: true,
          finishAll: false,
          episodeOf: byTrace,
          provenance: { transport: "otlp/http" },
        }));
      } catch (err) {
        refuse(
          trace.count,
          `${trace.count} in a trace that cannot be read (${messageOf(err)})`,
        );
        continue;
      }
      for (const x of mapped.rejected) refuse(1, x.reason);
      stats.otlp_spans += mapped.spans;
      for (const ep of mapped.episodes) {
        await this.#store(cap, { events: ep.events, slicer });
      }
    }
    const message = rejected
      ? `${rejected} ${rejected === 1 ? "span" : "spans"} refused: ${
        reasons.join("; ")
      }`
      : "";
    return { rejected, message };
  }

  /** The OTLP event ids a capture holds (read from the index once). */
  #seenIn(cap: string): Set<string> {
    let set = this.#seen.get(cap);
    if (set) return set;
    set = new Set();
    const harness = this.#harness;
    if (harness.hasCapture(cap)) {
      harness.flush();
      for (
        const row of harness.index.query(
          "SELECT event_id FROM event_index WHERE capture_id = ? AND event_id LIKE 'evt_otlp_%'",
          cap,
        )
      ) set.add(String(row.event_id));
    }
    this.#seen.set(cap, set);
    return set;
  }

  /**
   * Store events (each once), a batch at a time with a turn of the event
   * loop between; another request may store between two batches.
   */
  async #store(
    cap: string,
    { events, slicer }: { events: UnsealedEvent[]; slicer: TimeSlicer },
  ): Promise<void> {
    const have = this.#seenIn(cap);
    for (let i = 0; i < events.length;) {
      const batch: UnsealedEvent[] = [];
      for (; i < events.length && batch.length < EMIT_BATCH; i++) {
        const ev = events[i];
        if (have.has(ev.event_id)) this.stats.otlp_duplicate_events++;
        else {
          have.add(ev.event_id);
          batch.push(ev);
        }
      }
      try {
        if (batch.length) this.#harness.sink(cap).emitMany(batch);
      } catch (err) {
        for (const ev of batch) have.delete(ev.event_id);
        throw err;
      }
      await slicer.pause();
    }
  }
}
