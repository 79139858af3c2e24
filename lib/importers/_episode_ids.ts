/**
 * Episode ids of one imported file: `<format>_<task>_<trial>` (cut to fit
 * an id), then `_2`, `_3` … for the next trajectories with the same base,
 * unique in linear time (a counter per base, not a loop appending `_`).
 *
 * @module
 */
import { MAX_ID_LENGTH } from "../trace/ids.ts";
import type { ImportFormat } from "./import_formats.ts";
import type { Trajectory } from "./_trajectory.ts";

/** Episode ids unique within one file, in linear time. */
export class EpisodeIds {
  readonly #seen = new Set<string>();
  readonly #next = new Map<string, number>();

  /**
   * A unique id for a trajectory: `<format>_<task>_<trial>` (cut to fit),
   * then `_2`, `_3` … for the next trajectories with the same base.
   *
   * @param format The file's format.
   * @param t The trajectory.
   * @returns Its episode id.
   */
  take(format: ImportFormat, t: Trajectory): string {
    const base = `${format}_${t.task_id}_${t.trial}`.replace(
      /[^A-Za-z0-9_.-]/g,
      "_",
    ).slice(0, MAX_ID_LENGTH - 8);
    let id = base;
    let k = this.#next.get(base) ?? 1;
    while (this.#seen.has(id)) id = `${base}_${++k}`;
    this.#next.set(base, k);
    this.#seen.add(id);
    return id;
  }
}
