/**
 * Bytes of exchanges as the gateway handles them: an upstream's answer read
 * whole (JSON, or a stream's events), a stream's pieces played again as
 * they came, header-safe text, the error an upstream answered.
 *
 * @module
 */
import { SseParser } from "./sse.ts";
import { isObject, type NormResponse, type WireReader } from "./wire_types.ts";

/** Text fit for a response header (printable ASCII, bounded). */
export function headerText(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, "?").slice(0, 300);
}

export function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/** Pieces kept from an upstream stream, streamed again as they came. */
export function streamOf(chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream<Uint8Array>({
    pull(ctrl) {
      if (i < chunks.length) ctrl.enqueue(chunks[i++]);
      else ctrl.close();
    },
  }, { highWaterMark: 0 });
}

export function safeJson(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return null;
  }
}

/** An upstream answer read whole (JSON, or a stream's events). */
export function readUpstream(
  reader: WireReader,
  { bytes, chunks }: { bytes: Uint8Array; chunks: Uint8Array[] | null },
): NormResponse | null {
  try {
    if (!chunks) return reader.response(safeJson(bytes));
    const acc = reader.streamReader();
    const p = new SseParser((e, d) => acc.add(e, d));
    for (const c of chunks) p.push(c);
    p.end();
    return acc.complete ? acc.result() : null;
  } catch {
    return null;
  }
}

/** What the gateway's own answer says, read back as the client will. */
export function readOwn(
  reader: WireReader,
  { own, stream }: { own: { body: Uint8Array }; stream: boolean },
): NormResponse {
  return readUpstream(reader, {
    bytes: own.body,
    chunks: stream ? [own.body] : null,
  })!;
}

/** The error an upstream answered, in a few words. */
export function errorOf(
  json: unknown,
  status: number,
): { type: string; message: string } {
  const e = isObject(json) && isObject(json.error) ? json.error : null;
  return {
    type: e && typeof e.type === "string" ? e.type : `http_${status}`,
    message: e && typeof e.message === "string"
      ? e.message.slice(0, 2000)
      : `the upstream answered ${status}`,
  };
}
