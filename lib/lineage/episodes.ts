/**
 * Reading a capture's episodes from a store.
 *
 * @module
 */
import type { CaptureReader } from "../store/reader.ts";
import type { TraceEvent } from "../trace/event.ts";
import { sha256Digest } from "../trace/hash.ts";
import type { Episode } from "./records.ts";

/** Episode id that holds capture-level annotations. */
export const CAPTURE_EPISODE = "_capture";

/** Options of {@linkcode loadEpisodes}. */
export interface LoadEpisodesOptions {
  /** Read only events up to this sequence (what a chain check covered). */
  uptoSequence?: number;
}

/**
 * The episodes of a capture, in order of their first event, with blob
 * references resolved. Capture-level annotations (`_capture`) are left out.
 *
 * @param store The store.
 * @param captureId The capture.
 * @param options Sequence bound.
 * @returns The episodes.
 */
export async function loadEpisodes(
  store: CaptureReader,
  captureId: string,
  options: LoadEpisodesOptions = {},
): Promise<Episode[]> {
  const byId = new Map<string, TraceEvent[]>();
  for await (const ev of store.readEvents(captureId)) {
    if (
      options.uptoSequence !== undefined && ev.sequence > options.uptoSequence
    ) break;
    if (ev.episode_id === CAPTURE_EPISODE) continue;
    const list = byId.get(ev.episode_id);
    if (list) list.push(ev);
    else byId.set(ev.episode_id, [ev]);
  }
  return [...byId].map(([episode_id, events]) => ({
    capture_id: captureId,
    episode_id,
    events,
    source_digest: sha256Digest(events.map((e) => e.event_hash).join("\n")),
  }));
}
