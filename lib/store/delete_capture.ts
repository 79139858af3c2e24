/**
 * Deleting captures from a store the caller may write and nobody else
 * holds: each capture's spool, its rows in the index, its head receipts,
 * the active pointer when it names it, its live-export cursors, and the
 * blobs no other capture refers to. Evidence goes only when asked for by
 * id; the active capture (where hooks record) only with `force`.
 *
 * The store's lock is held for the whole deletion, so no writer (an ingest
 * server, another CLI) can append meanwhile; with a writer running, the
 * lock refuses ({@linkcode StoreLockedError}).
 *
 * @module
 */
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { StoreLock } from "./lock.ts";
import { spoolIds, spoolPathIn } from "./_spool_files.ts";
import { headsPath } from "./heads.ts";
import { readActiveCapture, writeActiveCapture } from "./active_capture.ts";
import { validateId } from "../trace/ids.ts";

/** Options of {@linkcode deleteCaptures}. */
export interface DeleteCapturesOptions {
  /**
   * Delete the active capture too (the one `capture start` opened, where
   * hook events without a capture go).
   * @default false
   */
  force?: boolean;
}

/** What deleting one capture removed. */
export interface DeletedCapture {
  /** The capture. */
  capture_id: string;
  /** Bytes of its spool. */
  spool_bytes: number;
  /** Index rows removed (capture, episodes, events). */
  index_rows: number;
  /** Blobs removed (referred to by no other capture). */
  blobs: number;
  /** Bytes of those blobs. */
  blob_bytes: number;
}

/** The capture is the active one, and `force` was not given. */
export class ActiveCaptureError extends Error {
  /** The capture. */
  readonly captureId: string;
  /**
   * Create an `ActiveCaptureError`.
   *
   * @param captureId The active capture.
   */
  constructor(captureId: string) {
    super(
      `Capture "${captureId}" is the active capture (hooks record into it): finish it first (capture finish ${captureId}), or pass --force to delete it anyway`,
    );
    this.name = "ActiveCaptureError";
    this.captureId = captureId;
  }
}

const BLOB_REF = /"\$blob":"sha256:([0-9a-f]{64})"/g;

/**
 * Delete captures (all or none are checked first; then one by one).
 *
 * @param root The store root.
 * @param ids The captures.
 * @param options `force`: the active capture too.
 * @returns What each deletion removed, in the order given.
 * @throws {StoreLockedError} Another process holds the store (a server: stop it first).
 * @throws {Deno.errors.NotFound} A capture that is not in the store.
 * @throws {ActiveCaptureError} The active capture, without `force`.
 */
export function deleteCaptures(
  root: string,
  ids: string[],
  options: DeleteCapturesOptions = {},
): DeletedCapture[] {
  const lock = StoreLock.acquire(root, { role: "cli" });
  try {
    const present = new Set(spoolIds(root));
    const active = readActiveCapture(root);
    for (const id of ids) {
      validateId("capture", id);
      if (!present.has(id)) {
        throw new Deno.errors.NotFound(
          `No capture "${id}" in ${root}; see capture list`,
        );
      }
      if (id === active && !options.force) throw new ActiveCaptureError(id);
    }
    const gone = new Set(ids);
    const out = ids.map((id) => deleteOne(root, id, gone));
    dropReceipts(root, gone);
    if (active !== null && gone.has(active)) writeActiveCapture(root, null);
    dropCursors(root, gone);
    return out;
  } finally {
    lock.release();
  }
}

function deleteOne(
  root: string,
  id: string,
  gone: Set<string>,
): DeletedCapture {
  const spool = spoolPathIn(root, id);
  const refs = reachable(root, [Deno.readTextFileSync(spool)]);
  // Blobs are shared by content: keep what a remaining capture reaches.
  if (refs.size) {
    const others = spoolIds(root).filter((o) => !gone.has(o));
    for (
      const hex of reachable(
        root,
        others.map((o) => Deno.readTextFileSync(spoolPathIn(root, o))),
      )
    ) refs.delete(hex);
  }
  let blobs = 0, blobBytes = 0;
  for (const hex of refs) {
    const path = join(root, "blobs", "sha256", hex);
    try {
      blobBytes += Deno.statSync(path).size;
      Deno.removeSync(path);
      blobs++;
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
  }
  const spoolBytes = Deno.statSync(spool).size;
  Deno.removeSync(spool);
  return {
    capture_id: id,
    spool_bytes: spoolBytes,
    index_rows: dropIndexRows(root, id),
    blobs,
    blob_bytes: blobBytes,
  };
}

/**
 * The blobs texts refer to, and the blobs those refer to (a large value's
 * blob may hold references to its own large parts).
 */
function reachable(root: string, texts: string[]): Set<string> {
  const seen = new Set<string>();
  const queue: string[] = [];
  const scan = (text: string) => {
    for (const m of text.matchAll(BLOB_REF)) {
      if (!seen.has(m[1])) {
        seen.add(m[1]);
        queue.push(m[1]);
      }
    }
  };
  texts.forEach(scan);
  while (queue.length) {
    const hex = queue.pop()!;
    try {
      scan(Deno.readTextFileSync(join(root, "blobs", "sha256", hex)));
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
  }
  return seen;
}

/** Remove a capture's rows from `harness.db` (derived: absent is fine). */
function dropIndexRows(root: string, id: string): number {
  const path = join(root, "harness.db");
  try {
    Deno.statSync(path);
  } catch {
    return 0;
  }
  const db = new DatabaseSync(path);
  try {
    let n = 0;
    for (const table of ["event_index", "episodes", "captures"]) {
      try {
        n += Number(
          db.prepare(`DELETE FROM ${table} WHERE capture_id = ?`).run(id)
            .changes,
        );
      } catch { /* a table this version lacks: rebuilt from spools anyway */ }
    }
    return n;
  } finally {
    db.close();
  }
}

/** Rewrite `heads.log` without the deleted captures' receipts (atomically). */
function dropReceipts(root: string, gone: Set<string>): void {
  const path = headsPath(root);
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch {
    return;
  }
  const kept = text.split("\n").filter((line) => {
    if (!line.trim()) return false;
    try {
      return !gone.has(JSON.parse(line).capture_id);
    } catch {
      return true; // not ours to judge: kept as it was
    }
  });
  const tmp = `${path}.tmp-${Deno.pid}`;
  Deno.writeTextFileSync(tmp, kept.map((l) => l + "\n").join(""), {
    mode: 0o600,
  });
  const f = Deno.openSync(tmp, { read: true });
  try {
    f.syncSync();
  } finally {
    f.close();
  }
  Deno.renameSync(tmp, path);
}

/** Take the deleted captures out of the live OTLP export's cursor file. */
function dropCursors(root: string, gone: Set<string>): void {
  const path = join(root, "otlp_export.json");
  let all: Record<string, Record<string, unknown>>;
  try {
    all = JSON.parse(Deno.readTextFileSync(path));
  } catch {
    return;
  }
  let changed = false;
  for (const cursors of Object.values(all ?? {})) {
    if (typeof cursors !== "object" || cursors === null) continue;
    for (const id of gone) {
      if (Object.hasOwn(cursors, id)) {
        delete cursors[id];
        changed = true;
      }
    }
  }
  if (!changed) return;
  const tmp = `${path}.tmp`;
  Deno.writeTextFileSync(tmp, JSON.stringify(all) + "\n", { mode: 0o600 });
  Deno.renameSync(tmp, path);
}
