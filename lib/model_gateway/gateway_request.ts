/**
 * {@linkcode GatewayRequest}: a model API request as the gateway reads it
 * (the ingest server's request).
 *
 * @module
 */

/** A request, as the gateway reads it (the ingest server's request). */
export interface GatewayRequest {
  /** Method. */
  readonly method: string;
  /** Path and query. */
  readonly target: string;
  /** One header. */
  header(name: string): string | null;
  /** Every header. */
  headers?(): Iterable<[string, string]>;
  /** The body's bytes. */
  bytes?(limit: number): Promise<Uint8Array>;
  /** The body as text. */
  text(limit: number): Promise<string>;
  /** Aborted when the client goes away. */
  readonly signal?: AbortSignal;
}
