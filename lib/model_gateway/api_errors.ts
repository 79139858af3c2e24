/**
 * A model API's own error, for an error the gateway or the ingest server
 * raises on a model route: its body in the shape of the API the client
 * speaks (the wire's `error`, `wires/<wire>/errors.ts`), so an SDK reads it
 * as it reads the provider's own. `errorAnswer` (`lib/ingest/error_answer.ts`)
 * is its one caller for answers; the gateway reads it back only to record
 * what the client was told ({@linkcode recordedError}).
 *
 * @module
 */

import type { WireError, WireSpec } from "./wires/wire_spec.ts";

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
  /** A streamed body the listener reads piece by piece (a relay's). */
  pieces?: AnswerPieces;
}

/** A streamed body, piece by piece (the listener's `AnswerPieces`). */
export interface AnswerPieces {
  /**
   * The next piece.
   *
   * @returns It (valid until the next call), or null at the end.
   */
  read(): Promise<Uint8Array | null>;
  /**
   * Stop reading.
   *
   * @param reason Why.
   */
  cancel(reason?: unknown): Promise<void>;
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

/**
 * The error a request's record keeps when the gateway answered it with its
 * own error: the API's error, read back as an upstream's would be.
 *
 * @param spec The wire the client speaks.
 * @param error HTTP status and message of the error the client got.
 * @returns Its type and message in a few words.
 */
export function recordedError(
  spec: WireSpec,
  { status, message }: { status: number; message: string },
): WireError {
  let json: unknown = null;
  try {
    json = JSON.parse(spec.error(status, message).body);
  } catch {
    // Read as an upstream's error that is not JSON.
  }
  return spec.errorOf(json, status);
}
