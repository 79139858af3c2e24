/**
 * `capture delete <id>… [--force]` and `store prune --older-than AGE
 * [--dry-run]`: deleting evidence, by id or by age (the store's retention;
 * run it by hand or from a timer). Both need the store to themselves: with
 * a server running they say to stop it first, and how.
 *
 * @module
 */
import {
  deleteCaptures,
  type DeletedCapture,
} from "../store/delete_capture.ts";
import { pruneCaptures } from "../store/prune_captures.ts";
import { StoreLockedError } from "../store/lock.ts";
import { type Io, UsageError } from "./io.ts";

/** Options of {@linkcode deleteCommand}. */
export interface DeleteCommandOptions {
  /** The captures. */
  ids: string[];
  /** The store root. */
  root: string;
  /** Delete the active capture too. */
  force: boolean;
  /** One JSON object out. */
  json: boolean;
}

/**
 * Delete captures by id.
 *
 * @param o Captures, root, `--force`, `--json`.
 * @param io Output.
 * @returns 0.
 * @throws {UsageError} No capture named.
 * @throws {Error} A server holds the store (stop it first), an unknown or
 *   active capture.
 */
export function deleteCommand(o: DeleteCommandOptions, io: Io): number {
  if (o.ids.length === 0) {
    throw new UsageError("capture delete needs one or more capture ids");
  }
  const deleted = alone(
    o.root,
    () => deleteCaptures(o.root, o.ids, { force: o.force }),
  );
  io.out(
    o.json
      ? JSON.stringify({ deleted }, null, 2)
      : deleted.map(describe).join("\n"),
  );
  return 0;
}

/** Options of {@linkcode pruneCommand}. */
export interface PruneCommandOptions {
  /** `--older-than`: `30d`, `12h`, `90m`. */
  olderThan?: string;
  /** The store root. */
  root: string;
  /** Only say what would go. */
  dryRun: boolean;
  /** One JSON object out. */
  json: boolean;
  /** The clock. */
  now: number;
}

/**
 * Delete the captures not written to for a time, but the active one.
 *
 * @param o Age, root, `--dry-run`, `--json`, clock.
 * @param io Output.
 * @returns 0.
 * @throws {UsageError} No age, or one that does not parse.
 * @throws {Error} A server holds the store (stop it first).
 */
export function pruneCommand(o: PruneCommandOptions, io: Io): number {
  const olderThanMs = parseAge(o.olderThan);
  const r = alone(
    o.root,
    () => pruneCaptures(o.root, { olderThanMs, now: o.now, dryRun: o.dryRun }),
  );
  if (o.json) {
    io.out(JSON.stringify({ dry_run: o.dryRun, ...r }, null, 2));
    return 0;
  }
  const lines = o.dryRun
    ? r.expired.map((id) => `would delete ${id}`)
    : r.deleted.map(describe);
  if (!r.expired.length) {
    lines.push(`No capture was last written more than ${o.olderThan} ago`);
  }
  if (r.kept_active) {
    lines.push(
      `kept ${r.kept_active}: it is the active capture (capture finish ${r.kept_active} lets it go)`,
    );
  }
  io.out(lines.join("\n"));
  return 0;
}

/**
 * An age such as `30d`, `12h`, `90m` or `45s`, in milliseconds.
 *
 * @param text The age.
 * @returns Milliseconds.
 * @throws {UsageError} Absent, or not a whole number with one of d, h, m, s.
 */
export function parseAge(text: string | undefined): number {
  const m = /^(\d+)([dhms])$/.exec(text ?? "");
  if (!m) {
    throw new UsageError(
      `--older-than takes a whole number and a unit, d, h, m or s (30d), not ${
        JSON.stringify(text ?? "")
      }`,
    );
  }
  const unit = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000 }[
    m[2] as "d" | "h" | "m" | "s"
  ];
  return Number(m[1]) * unit;
}

function describe(d: DeletedCapture): string {
  return `deleted ${d.capture_id}: spool ${d.spool_bytes} bytes, ${d.index_rows} index rows, ${d.blobs} blobs (${d.blob_bytes} bytes)`;
}

/** Run with the store to ourselves, or say how to get it. */
function alone<T>(root: string, work: () => T): T {
  try {
    return work();
  } catch (err) {
    if (!(err instanceof StoreLockedError)) throw err;
    const where = err.owner?.url ? ` at ${err.owner.url}` : "";
    throw new Error(
      `Deleting needs the store ${root} to itself, and process ${
        err.owner?.pid ?? "?"
      } (${
        err.owner?.role ?? "a writer"
      }${where}) holds it: stop the server first (deno task ingest stop), run this again, then start it again`,
      { cause: err },
    );
  }
}
