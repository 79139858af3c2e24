/**
 * Errors the gateway itself answers, in the shape of the API the client
 * speaks, so an SDK reads them as it reads the provider's own.
 *
 * @module
 */

import type { WireSpec } from "./wires/wire_spec.ts";

/** An answer of the gateway (the ingest handler's answer shape). */
export interface GatewayAnswer {
  /** HTTP status. */
  status: number;
  /** Headers, lower-case names. */
  headers: Record<string, string>;
  /** Body text. */
  body: string | null;
  /** Body bytes as they came from the upstream. */
  raw?: Uint8Array;
  /** A streamed body. */
  stream?: ReadableStream<Uint8Array>;
}

/**
 * An error answer in an API's own shape.
 *
 * @param spec The wire the client speaks.
 * @param error HTTP status, and what went wrong and what to do (never a credential).
 * @returns The answer.
 */
export function apiError(
  spec: WireSpec,
  { status, message }: { status: number; message: string },
): GatewayAnswer {
  const a = spec.error(status, message);
  return { status: a.status, headers: a.headers, body: a.body };
}
