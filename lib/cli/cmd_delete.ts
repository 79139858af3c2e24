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
  /** `--older-than`: `30d`, `12h`, `90min`, `6mo`. */
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
  const before = new Date(o.now - olderThanMs).toISOString();
  if (o.json) {
    io.out(
      JSON.stringify(
        { dry_run: o.dryRun, written_before: before, ...r },
        null,
        2,
      ),
    );
    return 0;
  }
  // The cutoff as a date: a unit misread shows in the first line.
  const lines = r.expired.length
    ? [
      `${
        o.dryRun ? "Would delete" : "Deleted"
      } the captures last written before ${before} (${o.olderThan} ago):`,
      ...(o.dryRun
        ? r.expired.map((id) => `would delete ${id}`)
        : r.deleted.map(describe)),
    ]
    : [
      `No capture was last written more than ${o.olderThan} ago (before ${before})`,
    ];
  if (r.kept_active) {
    lines.push(
      `kept ${r.kept_active}: it is the active capture (capture finish ${r.kept_active} lets it go)`,
    );
  }
  io.out(lines.join("\n"));
  return 0;
}

/** Each unit `--older-than` takes, in milliseconds (a month is 30 days). */
const AGE_UNITS: Record<string, number> = {
  s: 1000,
  min: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 7 * 86_400_000,
  mo: 30 * 86_400_000,
};

/**
 * An age such as `30d`, `12h`, `90min`, `6mo` or `45s`, in milliseconds.
 * A bare `m` is refused: `6m` typed for six months must not delete what
 * is older than six minutes.
 *
 * @param text The age.
 * @returns Milliseconds.
 * @throws {UsageError} Absent, `m` (with the two readings), or not a
 *   whole number with one of s, min, h, d, w, mo.
 *
 * @example
 * ```ts
 * import { parseAge } from "./cmd_delete.ts";
 * import { equal, throws } from "node:assert/strict";
 * equal(parseAge("90min"), 90 * 60_000);
 * equal(parseAge("6mo"), 6 * 30 * 86_400_000);
 * throws(() => parseAge("6m"), /6min \(minutes\) or 6mo \(months/);
 * ```
 */
export function parseAge(text: string | undefined): number {
  const m = /^(\d+)([a-z]+)$/.exec(text ?? "");
  if (m?.[2] === "m") {
    throw new UsageError(
      `--older-than ${text} could be minutes or months: write ${
        m[1]
      }min (minutes) or ${m[1]}mo (months of 30 days)`,
    );
  }
  if (!m || !Object.hasOwn(AGE_UNITS, m[2])) {
    throw new UsageError(
      `--older-than takes a whole number and a unit, s, min, h, d, w or mo (30d, 6mo), not ${
        JSON.stringify(text ?? "")
      }`,
    );
  }
  return Number(m[1]) * AGE_UNITS[m[2]];
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
