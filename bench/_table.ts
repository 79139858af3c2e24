/**
 * Shared output for benchmark scripts: an aligned table on stdout.
 *
 * @module
 */
import { renderTable } from "../lib/cli/table.ts";

/** One measured figure. */
export interface BenchRow {
  /** What was measured. */
  name: string;
  /** The figure. */
  value: string;
  /** The target from the issue, if any. */
  target?: string;
  /** Whether the target is met ("yes"/"no"/"-"). */
  met?: string;
}

/**
 * Print a titled table of results.
 *
 * @param title Table title.
 * @param rows Results.
 */
export function printTable(title: string, rows: BenchRow[]): void {
  console.log(`\n## ${title}\n`);
  console.log(renderTable(
    ["measure", "value", "target", "met"],
    rows.map((r) => [r.name, r.value, r.target ?? "-", r.met ?? "-"]),
  ));
}

/**
 * Format a rate.
 *
 * @param perSecond Events per second.
 * @returns Text like `123,456/s`.
 */
export function rate(perSecond: number): string {
  return `${Math.round(perSecond).toLocaleString("en-US")}/s`;
}
