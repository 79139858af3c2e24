/**
 * Send OTLP/HTTP traces (JSON or protobuf) to a collector: spans in batches, retried on
 * 429, 502, 503 and 504 with exponential backoff (a `Retry-After` in
 * seconds is honoured, capped), any other error status fails with the
 * collector's answer.
 *
 * @module
 */
import type { OtlpSpan, OtlpTraces } from "./otlp_types.ts";
import { encodeOtlpProtobuf } from "./protobuf_encode.ts";

/** OTLP/HTTP encodings, named as `OTEL_EXPORTER_OTLP_PROTOCOL` names them. */
export type OtlpProtocol = "http/json" | "http/protobuf";

/** The collector refused the export or could not be reached. */
export class OtlpSendError extends Error {
  /** HTTP status, or 0 when there was no answer. */
  readonly status: number;
  /**
   * Create the error.
   *
   * @param message What went wrong and what to do.
   * @param status HTTP status, or 0.
   */
  constructor(message: string, status: number) {
    super(message);
    this.name = "OtlpSendError";
    this.status = status;
  }
}

/** Options of {@linkcode sendOtlp}. */
export interface OtlpSendOptions {
  /** Extra headers (for example an API key). */
  headers?: Record<string, string>;
  /** Spans per request. @default 1000 */
  batchSize?: number;
  /** Retries per batch on 429/502/503/504 or a network error. @default 5 */
  maxRetries?: number;
  /** First backoff in milliseconds, doubled per retry. @default 200 */
  backoffMs?: number;
  /** Longest wait in milliseconds, also for `Retry-After`. @default 10000 */
  maxBackoffMs?: number;
  /** Body encoding. @default "http/json" */
  protocol?: OtlpProtocol;
  /** Cancels a request in flight (a time-out, a stop): it fails as unanswered. */
  signal?: AbortSignal;
}

/** What {@linkcode sendOtlp} did. */
export interface OtlpSendReport {
  /** Requests that were accepted. */
  batches: number;
  /** Spans sent. */
  spans: number;
  /** Retries made. */
  retries: number;
}

const RETRY = new Set([429, 502, 503, 504]);

/**
 * The traces URL for an endpoint, as the OTLP exporters read
 * `OTEL_EXPORTER_OTLP_ENDPOINT`: a base URL (no path) gets `/v1/traces`
 * appended; a URL with a path is the traces URL already (as
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is taken).
 *
 * @param endpoint A base URL (`http://127.0.0.1:4318`) or a traces URL.
 * @returns The traces URL.
 * @example
 * ```ts
 * import { otlpTracesUrl } from "./send.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(otlpTracesUrl("http://127.0.0.1:4318"), "http://127.0.0.1:4318/v1/traces");
 * ```
 */
export function otlpTracesUrl(endpoint: string): string {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return endpoint;
  }
  if (url.pathname !== "/" && url.pathname !== "") return endpoint;
  url.pathname = "/v1/traces";
  return url.toString();
}

/** Split an export request into requests of at most `size` spans. */
export function batchTraces(traces: OtlpTraces, size: number): OtlpTraces[] {
  const out: OtlpTraces[] = [];
  for (const rs of traces.resourceSpans) {
    for (const ss of rs.scopeSpans) {
      for (let i = 0; i < ss.spans.length; i += size) {
        const spans: OtlpSpan[] = ss.spans.slice(i, i + size);
        out.push({
          resourceSpans: [{
            resource: rs.resource,
            scopeSpans: [{ scope: ss.scope, spans }],
          }],
        });
      }
    }
  }
  return out;
}

/**
 * POST traces to an OTLP/HTTP endpoint (`…/v1/traces`) as JSON or protobuf.
 *
 * @param endpoint The collector's traces URL, or its base URL (then
 *   `/v1/traces` is appended, as the OTLP exporters do).
 * @param traces What to send.
 * @param options Headers, batch size, retries.
 * @returns Batches, spans and retries.
 * @throws {OtlpSendError} When a batch is refused or retries run out;
 *   batches before it were delivered.
 */
export async function sendOtlp(
  endpoint: string,
  traces: OtlpTraces,
  options: OtlpSendOptions = {},
): Promise<OtlpSendReport> {
  const batchSize = options.batchSize ?? 1000;
  const maxRetries = options.maxRetries ?? 5;
  const maxBackoff = options.maxBackoffMs ?? 10_000;
  const report: OtlpSendReport = { batches: 0, spans: 0, retries: 0 };
  endpoint = otlpTracesUrl(endpoint);
  for (const batch of batchTraces(traces, batchSize)) {
    const protobuf = options.protocol === "http/protobuf";
    const body = protobuf ? encodeOtlpProtobuf(batch) : JSON.stringify(batch);
    const contentType = protobuf
      ? "application/x-protobuf"
      : "application/json";
    let wait = options.backoffMs ?? 200;
    for (let attempt = 0;; attempt++) {
      let status = 0;
      let detail = "";
      let retryAfter: string | null = null;
      try {
        const res = await fetch(endpoint, {
          method: "POST",
          headers: { ...options.headers, "content-type": contentType },
          body,
          signal: options.signal,
        });
        status = res.status;
        detail = (await res.text()).slice(0, 300);
        retryAfter = res.headers.get("retry-after");
      } catch (err) {
        detail = (err as Error).message;
      }
      if (status >= 200 && status < 300) break;
      if ((status !== 0 && !RETRY.has(status)) || attempt >= maxRetries) {
        throw new OtlpSendError(
          `OTLP endpoint ${endpoint} answered ${
            status || "nothing"
          } (${detail}) after ${attempt} retries; ${report.batches} of the batches were delivered. Check the URL (it ends in /v1/traces) and the collector's logs`,
          status,
        );
      }
      const asked = Number(retryAfter);
      const delay = Math.min(
        maxBackoff,
        Number.isFinite(asked) && asked > 0 ? asked * 1000 : wait,
      );
      await new Promise((r) => setTimeout(r, delay));
      wait *= 2;
      report.retries++;
    }
    report.batches++;
    report.spans += batch.resourceSpans[0].scopeSpans[0].spans.length;
  }
  return report;
}
