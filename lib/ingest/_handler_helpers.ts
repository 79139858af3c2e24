/**
 * Small helpers of the ingest handler: events grouped by capture, a fetch
 * request's body as bytes, and the JSON content-type check.
 *
 * @module
 */
import type { UnsealedEvent } from "../trace/event.ts";
import type { IngestRequest } from "./http1/mod.ts";
import { PayloadTooLargeError } from "./payload_too_large.ts";

/** Events grouped by capture, in order of first appearance. */
export function byCapture(events: UnsealedEvent[]): UnsealedEvent[][] {
  const groups = new Map<string, UnsealedEvent[]>();
  for (const ev of events) {
    const g = groups.get(ev.capture_id);
    if (g) g.push(ev);
    else groups.set(ev.capture_id, [ev]);
  }
  return [...groups.values()];
}

/** A fetch request that can also give its body as bytes (OTLP protobuf). */
export function withBytes(r: IngestRequest, req: Request): IngestRequest {
  return Object.assign(r, {
    bytes: async (limit: number): Promise<Uint8Array> => {
      const b = new Uint8Array(await req.arrayBuffer());
      if (b.length > limit) throw new PayloadTooLargeError(limit);
      return b;
    },
  });
}

/** Whether a Content-Type names JSON (`application/json`, any parameters). */
export function isJsonType(value: string | null): boolean {
  if (value === null) return false;
  if (value === "application/json") return true; // the common case, fast
  return value.split(";")[0].trim().toLowerCase() === "application/json";
}
