/**
 * Plain aligned text tables for human output.
 *
 * @module
 */
import { escapeTerminalText } from "./terminal_text.ts";

/**
 * Render rows as an aligned table with a header.
 *
 * @param headers Column titles.
 * @param cells Cells, already formatted (control characters are escaped).
 * @returns The table text (no trailing newline).
 *
 * @example
 * ```ts
 * import { renderTable } from "./table.ts";
 * import { ok } from "node:assert/strict";
 * const text = renderTable(["id", "n"], [["a", "1"], ["bb", "22"]]);
 * ok(text.split("\n").length >= 4 && text.includes("bb"));
 * ```
 */
export function renderTable(headers: string[], cells: string[][]): string {
  // Escaped before measuring, so a cell with control characters stays aligned.
  const rows = cells.map((r) => r.map((c) => escapeTerminalText(c ?? "")));
  const widths = headers.map((h, i) =>
    Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length))
  );
  const line = (cells: string[]) =>
    cells.map((c, i) => (c ?? "").padEnd(widths[i])).join("  ").trimEnd();
  return [
    line(headers),
    line(widths.map((w) => "-".repeat(w))),
    ...rows.map(line),
  ].join("\n");
}
