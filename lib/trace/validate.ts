/**
 * Shape check for events arriving from outside (the `/ingest` route, files).
 *
 * @module
 */
import type { Payload, UnsealedEvent } from "./event.ts";
import { SCHEMA_VERSION } from "./event.ts";
import { InvalidIdError, validateId } from "./ids.ts";

/** An event object whose envelope is not `harness.trace.v1`. */
export class EventShapeError extends TypeError {
  /** The offending field. */
  readonly field: string;
  /**
   * Create a `EventShapeError`.
   *
   * @param field The offending field.
   * @param message What is wrong.
   * @param options Cause.
   */
  constructor(field: string, message: string, options?: ErrorOptions) {
    super(`Invalid trace event field "${field}": ${message}`, options);
    this.name = "EventShapeError";
    this.field = field;
  }
}

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const KIND = /^[a-z][a-z0-9_]*(\.[a-z0-9_]+)*$/;

function str(obj: Record<string, unknown>, field: string, max = 256): string {
  const v = obj[field];
  if (typeof v !== "string" || v.length === 0) {
    throw new EventShapeError(field, "expected a non-empty string");
  }
  if (v.length > max) {
    throw new EventShapeError(field, `longer than ${max} characters`);
  }
  return v;
}

/**
 * Validate an incoming event object and return its unsealed part. Any
 * `sequence`, `prev_event_hash` and `event_hash` it carries are dropped: the
 * store assigns them when it seals the event into its capture's chain.
 *
 * @param value Parsed JSON.
 * @returns The unsealed event (a fresh object).
 * @throws {EventShapeError} Naming the first field that is wrong.
 */
export function validateEvent(value: unknown): UnsealedEvent {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new EventShapeError("$", "expected a JSON object");
  }
  checkJsonShape(value);
  const obj = value as Record<string, unknown>;
  if (obj.schema_version !== SCHEMA_VERSION) {
    throw new EventShapeError("schema_version", `expected "${SCHEMA_VERSION}"`);
  }
  const ids: Record<string, string> = {};
  for (const field of ["capture_id", "episode_id"] as const) {
    try {
      ids[field] = validateId(field.replace("_id", ""), obj[field]);
    } catch (err) {
      if (err instanceof InvalidIdError) {
        throw new EventShapeError(field, err.message, { cause: err });
      }
      throw err;
    }
  }
  const timestamp = str(obj, "timestamp");
  if (!TIMESTAMP.test(timestamp) || Number.isNaN(Date.parse(timestamp))) {
    throw new EventShapeError(
      "timestamp",
      "expected ISO 8601 UTC with milliseconds, like 2026-01-31T12:00:00.000Z",
    );
  }
  const kind = str(obj, "kind", 64);
  if (!KIND.test(kind)) {
    throw new EventShapeError("kind", "expected a dotted lowercase name");
  }
  const src = obj.source;
  if (typeof src !== "object" || src === null || Array.isArray(src)) {
    throw new EventShapeError("source", "expected {host, adapter, model}");
  }
  const s = src as Record<string, unknown>;
  const host = str(s, "host", 64);
  const adapter = str(s, "adapter", 64);
  if (s.model !== null && typeof s.model !== "string") {
    throw new EventShapeError("source.model", "expected a string or null");
  }
  const parent = obj.parent_event_id ?? null;
  if (parent !== null && (typeof parent !== "string" || parent.length > 256)) {
    throw new EventShapeError("parent_event_id", "expected a string or null");
  }
  const payload = obj.payload;
  if (
    typeof payload !== "object" || payload === null || Array.isArray(payload)
  ) {
    throw new EventShapeError("payload", "expected a JSON object");
  }
  return {
    schema_version: SCHEMA_VERSION,
    event_id: str(obj, "event_id"),
    capture_id: ids.capture_id,
    episode_id: ids.episode_id,
    timestamp,
    source: { host, adapter, model: (s.model as string | null) ?? null },
    actor: str(obj, "actor", 64),
    kind,
    parent_event_id: parent as string | null,
    payload: payload as Payload,
  };
}

/** Deepest nesting an event (or hook payload) may have. */
export const MAX_JSON_DEPTH = 64;

/**
 * Check that a parsed value can be sealed: no number that is not finite
 * (`1e400` parses to Infinity) and no nesting deeper than
 * {@linkcode MAX_JSON_DEPTH}. Iterative, so a hostile depth cannot
 * overflow the stack.
 *
 * @param value A parsed JSON value.
 * @param maxDepth The limit.
 * @throws {EventShapeError} Naming the path of the first problem.
 *
 * @example
 * ```ts
 * import { checkJsonShape } from "./validate.ts";
 * import { throws } from "node:assert/strict";
 * throws(() => checkJsonShape({ a: JSON.parse("1e400") }));
 * ```
 */
export function checkJsonShape(
  value: unknown,
  maxDepth: number = MAX_JSON_DEPTH,
): void {
  // A fast pass with no path strings; the slow pass names the problem.
  if (shapeOk(value, maxDepth)) return;
  const stack: [unknown, number, string][] = [[value, 0, "$"]];
  while (stack.length) {
    const [v, depth, path] = stack.pop()!;
    if (typeof v === "number" && !Number.isFinite(v)) {
      throw new EventShapeError(path, "a number JSON cannot hold (not finite)");
    }
    if (typeof v !== "object" || v === null) continue;
    if (depth >= maxDepth) {
      throw new EventShapeError(path, `nested deeper than ${maxDepth} levels`);
    }
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        stack.push([v[i], depth + 1, `${path}[${i}]`]);
      }
    } else {
      for (const k in v) {
        stack.push([
          (v as Record<string, unknown>)[k],
          depth + 1,
          `${path}.${k}`,
        ]);
      }
    }
  }
}

function shapeOk(value: unknown, maxDepth: number): boolean {
  const values: unknown[] = [value];
  const depths: number[] = [0];
  while (values.length) {
    const v = values.pop();
    const depth = depths.pop()!;
    if (typeof v === "number") {
      if (!Number.isFinite(v)) return false;
      continue;
    }
    if (typeof v !== "object" || v === null) continue;
    if (depth >= maxDepth) return false;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        values.push(v[i]);
        depths.push(depth + 1);
      }
    } else {
      for (const k in v) {
        values.push((v as Record<string, unknown>)[k]);
        depths.push(depth + 1);
      }
    }
  }
  return true;
}
