/**
 * `ingest.ts export otlp <capture_id> [--endpoint URL | --out FILE]
 * [--protocol http/json|http/protobuf]`: a capture as OTLP traces, written
 * to a file (or stdout, JSON only) or sent to a collector. An `--out` file
 * ending in `.pb` is protobuf unless `--protocol` says otherwise.
 *
 * @module
 */
import { captureToOtlp } from "../otel/export.ts";
import { type OtlpProtocol, sendOtlp } from "../otel/send.ts";
import { encodeOtlpProtobuf } from "../otel/protobuf_encode.ts";
import type { TraceEvent } from "../trace/event.ts";
import { openForRead } from "./cmd_store.ts";
import { type Io, UsageError } from "./io.ts";
import { maskUrlCredentials } from "../trace/mask_url.ts";

/** Arguments of {@linkcode exportOtlpCommand}. */
export interface ExportOtlpArgs {
  /** Capture id. */
  capture?: string;
  /** Store root. */
  root: string;
  /** Collector URL (`…/v1/traces`). */
  endpoint?: string;
  /** Output file. */
  out?: string;
  /** Extra headers, `K=V,K2=V2` (like `OTEL_EXPORTER_OTLP_HEADERS`). */
  headers?: string;
  /** Longest argument/result value, in characters. */
  maxValueChars?: string;
  /** `http/json` or `http/protobuf`. */
  protocol?: string;
  /** JSON summary. */
  json: boolean;
}

/**
 * Export one capture.
 *
 * @param a Capture, destination, limits.
 * @param io Output.
 * @returns Exit code.
 */
export async function exportOtlpCommand(
  a: ExportOtlpArgs,
  io: Io,
): Promise<number> {
  if (!a.capture) {
    throw new UsageError(
      "export otlp needs a capture id: export otlp <capture_id> [--endpoint URL | --out FILE.json|FILE.pb]",
    );
  }
  if (a.endpoint && a.out) {
    throw new UsageError("export otlp takes --endpoint or --out, not both");
  }
  const max = a.maxValueChars === undefined ? 8192 : Number(a.maxValueChars);
  if (!Number.isInteger(max) || max < 16) {
    throw new UsageError("--max-value-chars takes a whole number ≥ 16");
  }
  if (
    a.protocol !== undefined && a.protocol !== "http/json" &&
    a.protocol !== "http/protobuf"
  ) {
    throw new UsageError(
      `--protocol takes http/json or http/protobuf, not "${a.protocol}"`,
    );
  }
  const protocol: OtlpProtocol = (a.protocol as OtlpProtocol | undefined) ??
    (a.out?.endsWith(".pb") ? "http/protobuf" : "http/json");
  if (protocol === "http/protobuf" && !a.endpoint && !a.out) {
    throw new UsageError(
      "Protobuf is binary: give --out FILE.pb or --endpoint URL, or use --protocol http/json for stdout",
    );
  }
  using store = openForRead(a.root);
  if (!store.hasCapture(a.capture)) {
    throw new UsageError(
      `No capture "${a.capture}" in ${a.root}; see \`capture list\``,
    );
  }
  const events: TraceEvent[] = [];
  for await (const ev of store.readEvents(a.capture)) events.push(ev);
  const traces = captureToOtlp(a.capture, events, { maxValueChars: max });
  const spans = traces.resourceSpans[0].scopeSpans[0].spans.length;
  if (a.endpoint) {
    const r = await sendOtlp(a.endpoint, traces, {
      headers: parseHeaders(a.headers),
      protocol,
    });
    const endpoint = maskUrlCredentials(a.endpoint);
    io.out(
      a.json
        ? JSON.stringify({ capture_id: a.capture, endpoint, ...r })
        : `Sent ${r.spans} span${
          r.spans === 1 ? "" : "s"
        } of capture ${a.capture} to ${endpoint} in ${r.batches} request${
          r.batches === 1 ? "" : "s"
        } (${r.retries} ${r.retries === 1 ? "retry" : "retries"})`,
    );
    return 0;
  }
  if (!a.out) {
    io.out(JSON.stringify(traces));
    return 0;
  }
  if (protocol === "http/protobuf") {
    await Deno.writeFile(a.out, encodeOtlpProtobuf(traces));
  } else await Deno.writeTextFile(a.out, JSON.stringify(traces) + "\n");
  io.out(
    a.json
      ? JSON.stringify({ capture_id: a.capture, out: a.out, spans, protocol })
      : `Wrote ${spans} spans of capture ${a.capture} to ${a.out}`,
  );
  return 0;
}

/**
 * Parse `K=V,K2=V2` headers (the `OTEL_EXPORTER_OTLP_HEADERS` form, values
 * URL-encoded).
 *
 * @param text The list, or undefined.
 * @returns The headers.
 * @throws {UsageError} When a part has no `=`.
 */
export function parseHeaders(
  text: string | undefined,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (text ?? "").split(",")) {
    if (!part.trim()) continue;
    const i = part.indexOf("=");
    if (i <= 0) {
      throw new UsageError(`--headers takes K=V,K2=V2; "${part}" has no "="`);
    }
    out[part.slice(0, i).trim()] = decodeURIComponent(part.slice(i + 1).trim());
  }
  return out;
}
