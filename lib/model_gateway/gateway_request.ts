/**
 * {@linkcode GatewayRequest}: a model API request as the gateway reads it
 * (the ingest server's request), and {@linkcode RequestTicket}: what the
 * gateway decided when it arrived (read once, handed to the recorder).
 *
 * @module
 */
import type { Identity } from "./episode_identity.ts";
import type { NormRequest, NormResponse, WireReader } from "./wire_types.ts";
import type { WireSpec } from "./wires/wire_spec.ts";

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

/**
 * A request on a recorded route as the gateway read it on arrival: its
 * body parsed, read by its wire, its capture and its episode decided (the
 * answer carries the episode in `x-harness-episode`).
 */
export interface RequestTicket {
  /** The body, parsed. */
  parsed: Record<string, unknown>;
  /** The request as its wire reads it. */
  request: NormRequest;
  /** The capture it records into. */
  capture: string;
  /** Its episode and conversation. */
  identity: Identity;
  /**
   * Settle the conversation's end once the client has its answer: the
   * answer as read, or null when none reached it (an error, a time-out).
   */
  settle(answer: NormResponse | null): void;
}

/** A request on a recorded route: its wire and the reader of this exchange. */
export interface RecordedRoute {
  /** The wire. */
  spec: WireSpec;
  /** The wire's name (`spec.wire`). */
  wire: string;
  /** The reader of this exchange (`spec.reader(route)`). */
  reader: WireReader;
}
