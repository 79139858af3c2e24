/**
 * The live OTLP export's durable cursors (`<root>/otlp_export.json`, one
 * entry per collector URL) and its bounded reader of a spool after a
 * sequence.
 *
 * @module
 */
import { join } from "node:path";
import type { HarnessStore } from "../store/store.ts";
import { readChunks } from "../store/file_chunks.ts";
import type { TraceEvent } from "../trace/event.ts";
import { splitLines } from "../trace/lines.ts";
import { maskUrlCredentials } from "../trace/mask_url.ts";

/** Where one capture's stream stands. */
export interface StreamCursor {
  /** Every span of the events up to this sequence was accepted. */
  sent: number;
  /** Replaying from this sequence up to `sent` rebuilds the open episodes and calls. */
  replay_from: number;
}

/** The cursor file of a store. */
export function cursorPath(store: HarnessStore): string {
  return join(store.root, "otlp_export.json");
}

/** A collector's place in the cursor file. */
export interface CursorFile {
  /** The cursor file. */
  path: string;
  /** The collector's URL. */
  endpoint: string;
}

/**
 * The cursors kept for a collector, or null when the file never named it.
 * The file names collectors by URL with credentials masked.
 *
 * @param file The cursor file and the collector's URL.
 * @returns Cursors by capture id, or null.
 */
export function readStreamCursors(
  file: CursorFile,
): Record<string, StreamCursor> | null {
  const { path, endpoint } = file;
  try {
    const all = JSON.parse(Deno.readTextFileSync(path));
    const key = maskUrlCredentials(endpoint);
    // A file written before credentials were masked names the full URL.
    const mine = Object.entries(all ?? {}).find(([k]) =>
      maskUrlCredentials(k) === key
    )?.[1];
    return mine && typeof mine === "object" ? { ...mine } : null;
  } catch {
    return null;
  }
}

/**
 * Write a collector's cursors (atomically, other collectors' kept).
 *
 * @param file The cursor file and the collector's URL.
 * @param cursors Cursors by capture id.
 */
export function writeStreamCursors(
  file: CursorFile,
  cursors: Record<string, StreamCursor>,
): void {
  const { path, endpoint } = file;
  const all: Record<string, unknown> = {};
  try {
    const old = JSON.parse(Deno.readTextFileSync(path));
    // Keys are masked URLs: a password an older file held is dropped here.
    for (const [k, v] of Object.entries(old ?? {})) {
      all[maskUrlCredentials(k)] = v;
    }
  } catch { /* first write */ }
  all[maskUrlCredentials(endpoint)] = cursors;
  const tmp = `${path}.tmp`;
  Deno.writeTextFileSync(tmp, JSON.stringify(all) + "\n", { mode: 0o600 });
  Deno.renameSync(tmp, path);
}

/**
 * A capture's stored events after a sequence, read from its spool a chunk
 * at a time (memory stays bounded whatever the spool's size); a torn tail
 * (an unacknowledged line) ends the read.
 *
 * @param store The store.
 * @param from The capture, and the last sequence not wanted.
 * @returns The events in sequence order, blob references unresolved.
 */
export async function* eventsAfter(
  store: HarnessStore,
  from: { captureId: string; after: number },
): AsyncGenerator<TraceEvent> {
  const { captureId, after } = from;
  const first = store.index.offsetAfter(captureId, after);
  if (!first) return;
  const decoder = new TextDecoder();
  for await (
    const l of splitLines(
      readChunks(store.spoolPath(captureId), first.byte_offset),
    )
  ) {
    if (!l.terminated) return;
    const ev = JSON.parse(decoder.decode(l.bytes)) as TraceEvent;
    if (ev.sequence > after) yield ev;
  }
}
