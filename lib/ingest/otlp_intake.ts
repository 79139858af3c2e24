/**
 * `POST /v1/traces`: OTLP/HTTP traces in (`application/x-protobuf` or
 * `application/json`, optionally gzip), mapped as `import --format otlp`
 * maps a file ({@linkcode mapOtlp}) into a capture chosen by the
 * `x-harness-capture` header, else the resource attribute
 * `harness.capture_id`, else the active capture, else `default`. Event ids
 * are derived from trace and span ids, and ids already in the capture are
 * skipped, so spans sent twice are stored once. Spans with invalid ids are
 * refused one by one and counted in the OTLP partial-success answer.
 *
 * @module
 */
import type { HarnessStore } from "../store/store.ts";
import type { UnsealedEvent } from "../trace/event.ts";
import { validateId } from "../trace/ids.ts";
import { mapOtlp, parseOtlp } from "../otel/import.ts";
import type { OtlpTraces } from "../otel/otlp_types.ts";
import type { IngestAnswer, IngestRequest } from "./http1/mod.ts";
import { json, messageOf, PayloadTooLargeError } from "./errors.ts";

/** Options of {@linkcode createOtlpIntake}. */
export interface OtlpIntakeOptions {
  /** Largest body (and largest gunzipped body), in bytes. */
  maxBodyBytes: number;
  /** The active capture, asked per request. @default () => null */
  activeCapture?: () => string | null;
  /** Capture when nothing else names one. @default "default" */
  defaultCaptureId?: string;
}

/** Counters of the intake (on `/health` under `stats`). */
export interface OtlpIntakeStats {
  /** Spans mapped and stored (or already stored). */
  otlp_spans: number;
  /** Spans refused (invalid ids). */
  otlp_rejected_spans: number;
  /** Events skipped because the capture had them (repeated sends). */
  otlp_duplicate_events: number;
}

/** Trace ids remembered per capture (their episode), before forgetting. */
const TRACES_KEPT = 100_000;

/** A request body as bytes, when the request can give them. */
type WithBytes = IngestRequest & {
  bytes?: (limit: number) => Promise<Uint8Array>;
};

async function body(req: WithBytes, limit: number): Promise<Uint8Array> {
  if (typeof req.bytes === "function") return await req.bytes(limit);
  // A listener that only gives text: JSON without compression only.
  return new TextEncoder().encode(await req.text(limit));
}

async function gunzip(bytes: Uint8Array, limit: number): Promise<Uint8Array> {
  const stream = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream()
    .pipeThrough(new DecompressionStream("gzip"));
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const c of stream) {
    size += c.length;
    if (size > limit) throw new PayloadTooLargeError(limit);
    chunks.push(c);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.length;
  }
  return all;
}

/** The OTLP protobuf answer, when it can travel as text (small numbers). */
function protobufAnswer(rejected: number, message: string): string | null {
  if (rejected === 0) return "";
  const msg = message.slice(0, 100);
  if (rejected > 127 || /[^\x20-\x7e]/.test(msg)) return null;
  const inner = String.fromCharCode(0x08, rejected, 0x12, msg.length) + msg;
  return String.fromCharCode(0x0a, inner.length) + inner;
}

/** The OTLP answer: partial success when spans were refused, as protobuf or JSON. */
function reply(
  rejected: number,
  message: string,
  protobuf: boolean,
): IngestAnswer {
  if (protobuf) {
    const text = protobufAnswer(rejected, message);
    if (text !== null) {
      return {
        status: 200,
        headers: { "content-type": "application/x-protobuf" },
        body: text,
      };
    }
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

// Over 80 lines: record and answer are closures over the route's counters and seen-event sets.
/**
 * Build the route.
 *
 * @param store The store it appends to.
 * @param options Body limit and capture routing.
 * @returns The route's answer function and its counters.
 */
export function createOtlpIntake(
  store: HarnessStore,
  options: OtlpIntakeOptions,
): {
  answer: (req: IngestRequest) => Promise<IngestAnswer>;
  stats: OtlpIntakeStats;
} {
  const stats: OtlpIntakeStats = {
    otlp_spans: 0,
    otlp_rejected_spans: 0,
    otlp_duplicate_events: 0,
  };
  const seen = new Map<string, Set<string>>();
  const episodes = new Map<string, Map<string, string>>();

  function seenIn(cap: string): Set<string> {
    let set = seen.get(cap);
    if (set) return set;
    set = new Set();
    if (store.hasCapture(cap)) {
      store.flush();
      for (
        const row of store.index.query(
          "SELECT event_id FROM event_index WHERE capture_id = ? AND event_id LIKE 'evt_otlp_%'",
          cap,
        )
      ) set.add(String(row.event_id));
    }
    seen.set(cap, set);
    return set;
  }

  function captureOf(req: IngestRequest, rs: OtlpTraces["resourceSpans"][0]) {
    const header = req.header("x-harness-capture");
    const attr = rs?.resource?.attributes?.find((a) =>
      a.key === "harness.capture_id"
    );
    const fromAttr = attr && "stringValue" in attr.value
      ? attr.value.stringValue
      : null;
    return validateId(
      "capture",
      header || fromAttr || options.activeCapture?.() ||
        options.defaultCaptureId || "default",
    );
  }

  /** Store the spans' events (each once); count and say what was refused. */
  function record(
    req: IngestRequest,
    data: OtlpTraces,
  ): { rejected: number; message: string } {
    let rejected = 0;
    const reasons: string[] = [];
    const out = new Map<string, UnsealedEvent[]>();
    for (const rs of data.resourceSpans) {
      const cap = captureOf(req, rs);
      let byTrace = episodes.get(cap);
      if (!byTrace) episodes.set(cap, byTrace = new Map());
      if (byTrace.size > TRACES_KEPT) byTrace.clear();
      const r = mapOtlp({ resourceSpans: [rs] }, {
        captureId: cap,
        partial: true,
        finishAll: false,
        episodeOf: byTrace,
        provenance: { transport: "otlp/http" },
      });
      rejected += r.rejected.length;
      for (const x of r.rejected.slice(0, 3)) reasons.push(x.reason);
      stats.otlp_spans += r.spans;
      const have = seenIn(cap);
      const list = out.get(cap) ?? [];
      for (const ep of r.episodes) {
        for (const ev of ep.events) {
          if (have.has(ev.event_id)) stats.otlp_duplicate_events++;
          else {
            have.add(ev.event_id);
            list.push(ev);
          }
        }
      }
      out.set(cap, list);
    }
    for (const [cap, list] of out) {
      if (list.length) store.sink(cap).emitMany(list);
    }
    stats.otlp_rejected_spans += rejected;
    const message = rejected
      ? `${rejected} spans refused: ${reasons.join("; ")}`
      : "";
    return { rejected, message };
  }

  async function answer(req: IngestRequest): Promise<IngestAnswer> {
    const type = (req.header("content-type") ?? "").split(";")[0].trim()
      .toLowerCase();
    const protobuf = type === "application/x-protobuf";
    try {
      let bytes = await body(req as WithBytes, options.maxBodyBytes);
      const encoding = (req.header("content-encoding") ?? "").toLowerCase();
      if (encoding === "gzip") {
        bytes = await gunzip(bytes, options.maxBodyBytes);
      } else if (encoding && encoding !== "identity") {
        return json(415, {
          ok: false,
          error:
            `Content-Encoding ${encoding} is not supported: send gzip or none`,
        });
      }
      const data = parseOtlp(bytes);
      if (!Array.isArray(data?.resourceSpans)) {
        throw new SyntaxError("The body has no resourceSpans list");
      }
      const { rejected, message } = record(req, data);
      return reply(rejected, message, protobuf);
    } catch (err) {
      if (err instanceof PayloadTooLargeError) {
        return json(413, { ok: false, error: err.message });
      }
      return json(400, {
        ok: false,
        error: `Not an OTLP traces request (${messageOf(err)})`,
      });
    }
  }
  return { answer, stats };
}
