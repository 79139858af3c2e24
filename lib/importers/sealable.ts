/**
 * The check every importer runs on the events it made, before anything is
 * written: what the store could not seal is an {@linkcode ImportError}
 * naming where, instead of a failure (or a stack overflow) at the write.
 * The depth limit is the trace's one, `MAX_JSON_DEPTH`
 * (`lib/trace/validate.ts`).
 *
 * @module
 */
import type { UnsealedEvent } from "../trace/event.ts";
import {
  checkJsonShape,
  EventShapeError,
  MAX_JSON_DEPTH,
} from "../trace/validate.ts";
import { ImportError } from "./import_error.ts";

/** A value's path for a message, `payload.a.b`, its middle cut when long. */
function shortPath(field: string): string {
  const path = field.replace(/^\$/, "payload");
  return path.length > 80 ? `${path.slice(0, 40)}…${path.slice(-30)}` : path;
}

/**
 * Refuse events the store could not seal: a number JSON cannot hold
 * (`1e400` parses to Infinity), or nesting deeper than
 * {@linkcode MAX_JSON_DEPTH} levels (tool arguments 20,000 levels deep
 * would overflow the stack when sealed). Iterative.
 *
 * @param events The events to check.
 * @param where Where they come from, for the error.
 * @throws {ImportError} Naming the event kind, the value's path and the limit.
 */
export function assertSealable(
  events: readonly UnsealedEvent[],
  where: string,
): void {
  for (const ev of events) {
    try {
      checkJsonShape(ev.payload);
    } catch (err) {
      if (!(err instanceof EventShapeError)) throw err;
      throw new ImportError(
        where,
        `${ev.kind} ${shortPath(err.field)}: ${
          /nested/.test(err.message)
            ? `nested deeper than the limit of ${MAX_JSON_DEPTH} levels`
            : "a number JSON cannot hold (not finite)"
        }`,
      );
    }
  }
}
