/**
 * What every host adapter shares: its options, its error, the event context
 * it builds, and readers for loosely typed hook payloads.
 *
 * @module
 */
import type { UnsealedEvent } from "../trace/event.ts";
import type { EventContext } from "../trace/make_event.ts";
import { InvalidIdError, validateId } from "../trace/ids.ts";
import type { ToolCallCorrelator } from "./correlator.ts";
import type { SessionMemory } from "./session_memory.ts";

/** Options of every adapter's `toEvents`. */
export interface AdapterOptions {
  /** Capture the events belong to. */
  captureId: string;
  /**
   * Model id for `source.model`.
   * @default null
   */
  model?: string | null;
  /** Correlator shared across the payloads of one ingest process. */
  correlator?: ToolCallCorrelator | null;
  /** Session memory shared across the payloads of one ingest process. */
  sessions?: SessionMemory | null;
  /** Clock. */
  now?: () => Date;
  /** Event id generator. */
  newId?: () => string;
  /**
   * host_b: store the full `llm_request` of BeforeToolSelection (off by
   * default: only the model, the message count and a digest are kept).
   * @default false
   */
  fullModelRequests?: boolean;
}

/** A host adapter: one hook payload in, canonical events out. */
export type HostAdapter = (
  payload: unknown,
  options: AdapterOptions,
) => UnsealedEvent[];

/** A hook payload an adapter cannot read (not an object, no session id, …). */
export class HookPayloadError extends TypeError {
  /**
   * Create a `HookPayloadError`.
   *
   * @param message What is wrong.
   * @param options Cause.
   */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "HookPayloadError";
  }
}

/**
 * Read a payload as an object.
 *
 * @param payload Parsed JSON.
 * @param what Name for the message.
 * @returns The object.
 * @throws {HookPayloadError} When it is not a JSON object.
 */
export function asObject(
  payload: unknown,
  what = "hook payload",
): Record<string, unknown> {
  if (
    typeof payload !== "object" || payload === null || Array.isArray(payload)
  ) {
    throw new HookPayloadError(`The ${what} must be a JSON object`);
  }
  return payload as Record<string, unknown>;
}

/**
 * A required string field.
 *
 * @param obj The payload.
 * @param field Field name.
 * @returns The string.
 * @throws {HookPayloadError} When missing or not a string.
 */
export function requireString(
  obj: Record<string, unknown>,
  field: string,
): string {
  const v = obj[field];
  if (typeof v !== "string" || v === "") {
    throw new HookPayloadError(`The hook payload has no string "${field}"`);
  }
  return v;
}

/**
 * An optional string field.
 *
 * @param obj The payload.
 * @param field Field name.
 * @returns The string or undefined.
 */
export function optString(
  obj: Record<string, unknown>,
  field: string,
): string | undefined {
  const v = obj[field];
  return typeof v === "string" ? v : undefined;
}

/**
 * An object field, or an empty object when absent or not an object.
 *
 * @param obj The payload.
 * @param field Field name.
 * @returns The object.
 */
export function objectField(
  obj: Record<string, unknown>,
  field: string,
): Record<string, unknown> {
  const v = obj[field];
  return typeof v === "object" && v !== null && !Array.isArray(v)
    ? v as Record<string, unknown>
    : {};
}

/**
 * A session id as an episode id.
 *
 * @param session The host's session id.
 * @returns The same string, validated.
 * @throws {HookPayloadError} When it cannot be an episode id.
 */
export function episodeIdOf(session: string): string {
  try {
    return validateId("episode", session);
  } catch (err) {
    if (err instanceof InvalidIdError) {
      throw new HookPayloadError(
        `The session id cannot be an episode id: ${err.message}`,
        { cause: err },
      );
    }
    throw err;
  }
}

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Where one hook payload's events belong (see {@linkcode contextFor}). */
export interface PayloadOrigin {
  /** Host name (`host_a`, …). */
  host: string;
  /** Episode id. */
  episodeId: string;
  /** The host's own timestamp, used when well-formed. */
  hostTimestamp?: string;
}

/**
 * The event context of one hook payload.
 *
 * @param options Adapter options.
 * @param origin Host, episode and the host's timestamp.
 * @returns Context for the event constructors.
 */
export function contextFor(
  options: AdapterOptions,
  origin: PayloadOrigin,
): EventContext {
  const { host, episodeId, hostTimestamp } = origin;
  const now = options.now ?? (() => new Date());
  return {
    captureId: options.captureId,
    episodeId,
    source: { host, adapter: `${host}-hooks`, model: options.model ?? null },
    now: hostTimestamp && ISO_MS.test(hostTimestamp)
      ? () => new Date(hostTimestamp)
      : now,
    ...(options.newId ? { newId: options.newId } : {}),
  };
}

/**
 * Parse a text that holds JSON (an object or array), else undefined.
 *
 * @param text Candidate JSON text.
 * @returns The parsed value or undefined.
 */
export function parseJsonText(text: unknown): unknown {
  if (typeof text !== "string") return undefined;
  const t = text.trimStart();
  if (!t.startsWith("{") && !t.startsWith("[")) return undefined;
  try {
    const v = JSON.parse(text);
    return typeof v === "object" && v !== null ? v : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Logical id of an MCP tool: `mcp:<server>/<tool>`, the same whatever host
 * called it.
 *
 * @param server MCP server name.
 * @param tool The server's own tool name.
 * @returns The logical id.
 */
export function mcpLogicalId(server: string, tool: string): string {
  return `mcp:${server}/${tool}`;
}
