/**
 * The read queries of the index: captures, episodes, counts and event rows,
 * each returned as plain records (copies, never SQLite's row objects).
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import type {
  CaptureRecord,
  EpisodeRecord,
  EventIndexRow,
} from "./index_records.ts";

/**
 * One capture's row.
 *
 * @param db The database.
 * @param captureId Capture id.
 * @returns Its record, or undefined.
 */
export function selectCapture(
  db: DatabaseSync,
  captureId: string,
): CaptureRecord | undefined {
  const row = db.prepare("SELECT * FROM captures WHERE capture_id = ?")
    .get(captureId) as CaptureRecord | undefined;
  return row ? { ...row } : undefined;
}

/**
 * A reader of one episode's row over a statement prepared once (the write
 * buffer asks for each episode it first sees: once per new episode).
 *
 * @param db The database.
 * @returns A function giving an episode's record, or undefined.
 */
export function episodeSelector(
  db: DatabaseSync,
): (captureId: string, episodeId: string) => EpisodeRecord | undefined {
  const stmt = db.prepare(
    "SELECT * FROM episodes WHERE capture_id = ? AND episode_id = ?",
  );
  return (captureId, episodeId) => {
    const row = stmt.get(captureId, episodeId) as
      | Record<string, unknown>
      | undefined;
    return row ? toEpisode(row) : undefined;
  };
}

/**
 * Every capture, by id.
 *
 * @param db The database.
 * @returns Capture records.
 */
export function selectCaptures(db: DatabaseSync): CaptureRecord[] {
  return (db.prepare("SELECT * FROM captures ORDER BY capture_id")
    .all() as unknown as CaptureRecord[]).map((r) => ({ ...r }));
}

/**
 * Episodes of a capture by first sequence, or of every capture by key.
 *
 * @param db The database.
 * @param captureId Capture id, or undefined for all (ordered by capture and episode id).
 * @returns Episode records.
 */
export function selectEpisodes(
  db: DatabaseSync,
  captureId?: string,
): EpisodeRecord[] {
  const rows = captureId === undefined
    ? db.prepare("SELECT * FROM episodes ORDER BY capture_id, episode_id").all()
    : db.prepare(
      "SELECT * FROM episodes WHERE capture_id = ? ORDER BY first_sequence",
    ).all(captureId);
  return (rows as Record<string, unknown>[]).map(toEpisode);
}

/**
 * Event counts by kind.
 *
 * @param db The database.
 * @param captureId Capture id.
 * @param episodeId Restrict to one episode.
 * @returns Kind → count, sorted by kind.
 */
export function countKinds(
  db: DatabaseSync,
  captureId: string,
  episodeId?: string,
): Record<string, number> {
  const rows = (episodeId === undefined
    ? db.prepare(
      "SELECT kind, count(*) AS n FROM event_index WHERE capture_id = ? GROUP BY kind ORDER BY kind",
    ).all(captureId)
    : db.prepare(
      "SELECT kind, count(*) AS n FROM event_index WHERE capture_id = ? AND episode_id = ? GROUP BY kind ORDER BY kind",
    ).all(captureId, episodeId)) as { kind: string; n: number }[];
  return Object.fromEntries(rows.map((r) => [r.kind, Number(r.n)]));
}

/**
 * Event rows of a capture in sequence order, or of every capture by key.
 *
 * @param db The database.
 * @param captureId Capture id, or undefined for all.
 * @param episodeId Restrict to one episode (with a capture).
 * @returns The rows.
 */
export function selectEvents(
  db: DatabaseSync,
  captureId?: string,
  episodeId?: string,
): EventIndexRow[] {
  const rows = captureId === undefined
    ? db.prepare("SELECT * FROM event_index ORDER BY capture_id, sequence")
      .all()
    : episodeId === undefined
    ? db.prepare(
      "SELECT * FROM event_index WHERE capture_id = ? ORDER BY sequence",
    ).all(captureId)
    : db.prepare(
      "SELECT * FROM event_index WHERE capture_id = ? AND episode_id = ? ORDER BY sequence",
    ).all(captureId, episodeId);
  return (rows as unknown as EventIndexRow[]).map((r) => ({ ...r }));
}

/**
 * Where the first event after a sequence starts in its spool.
 *
 * @param db The database.
 * @param where The capture and the sequence to look after.
 * @returns The byte offset and sequence, or null when there is none.
 */
export function selectOffsetAfter(
  db: DatabaseSync,
  where: { captureId: string; after: number },
): { sequence: number; byte_offset: number } | null {
  const { captureId, after } = where;
  const row = db.prepare(
    "SELECT sequence, byte_offset FROM event_index WHERE capture_id = ? AND sequence > ? ORDER BY sequence LIMIT 1",
  ).get(captureId, after) as
    | { sequence: number; byte_offset: number }
    | undefined;
  return row ? { sequence: row.sequence, byte_offset: row.byte_offset } : null;
}

/** An `episodes` row as a record (SQLite has no booleans). */
function toEpisode(row: Record<string, unknown>): EpisodeRecord {
  return {
    capture_id: row.capture_id as string,
    episode_id: row.episode_id as string,
    event_count: Number(row.event_count),
    first_sequence: Number(row.first_sequence),
    last_sequence: Number(row.last_sequence),
    first_timestamp: row.first_timestamp as string,
    last_timestamp: row.last_timestamp as string,
    started: Boolean(row.started),
    finished: Boolean(row.finished),
  };
}
