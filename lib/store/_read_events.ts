/**
 * Reading a capture's events from its spool, streaming, in sequence order.
 *
 * @module
 */
import type { TraceEvent } from "../trace/event.ts";
import { splitLines } from "../trace/lines.ts";
import { readChunks } from "./file_chunks.ts";
import { SpoolError } from "./spool.ts";
import type { ReadEventsOptions } from "./store_types.ts";

/** Options of {@linkcode readSpoolEvents}. */
export interface ReadSpoolOptions extends ReadEventsOptions {
  /** The spool's capture (for messages). */
  captureId: string;
  /** Replaces blob references in an event by their content. */
  resolve: (ev: TraceEvent) => TraceEvent;
}

/**
 * Stream the acknowledged events of a spool (a torn tail is not one).
 *
 * @param path The spool.
 * @param options Its capture (for messages), the episode filter, blob
 *   resolution and what resolves blob references in an event.
 * @returns The events.
 * @throws {SpoolError} When a complete line is not JSON.
 */
export async function* readSpoolEvents(
  path: string,
  options: ReadSpoolOptions,
): AsyncGenerator<TraceEvent> {
  const { captureId, resolve } = options;
  const decoder = new TextDecoder();
  const resolveBlobs = options.resolveBlobs ?? true;
  for await (const line of splitLines(readChunks(path))) {
    if (!line.terminated) return; // torn tail: not an acknowledged event
    let ev: TraceEvent;
    try {
      ev = JSON.parse(decoder.decode(line.bytes)) as TraceEvent;
    } catch (err) {
      throw new SpoolError(
        path,
        line.offset,
        `Line ${line.lineNumber} of capture "${captureId}" is not an event (${
          (err as Error).message
        }): the spool was altered; "capture verify ${captureId}" says where`,
      );
    }
    if (
      options.episodeId !== undefined && ev.episode_id !== options.episodeId
    ) {
      continue;
    }
    yield resolveBlobs ? resolve(ev) : ev;
  }
}
