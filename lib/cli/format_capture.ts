/**
 * Human renderings of captures, inspections and chain reports.
 *
 * @module
 */
import type { CaptureRecord } from "../store/index_records.ts";
import type { CaptureInspection } from "../store/inspect.ts";
import type { ChainReport } from "../trace/jsonl.ts";
import { renderTable } from "./table.ts";
import { FIDELITY_LEGEND } from "./legends.ts";

/**
 * The `capture list` table.
 *
 * @param captures Capture records.
 * @returns Text.
 */
export function formatCaptureList(captures: CaptureRecord[]): string {
  if (captures.length === 0) return "No captures yet.";
  return renderTable(
    ["capture", "status", "episodes", "events", "last event", "label"],
    captures.map((c) => [
      c.capture_id,
      c.status,
      String(c.episode_count),
      String(c.event_count),
      c.last_timestamp ?? "-",
      c.label ?? "",
    ]),
  );
}

/**
 * One line on a chain report.
 *
 * @param captureId The capture.
 * @param r The report.
 * @returns Text.
 */
export function formatChain(captureId: string, r: ChainReport): string {
  if (r.ok) {
    return `chain ok: ${r.events} events, head sequence ${r.head_sequence}, head ${r.head_hash}`;
  }
  const p = r.problem!;
  return `chain BROKEN in capture "${captureId}" at sequence ${p.sequence} (line ${p.line}, byte ${p.byte_offset}): ${p.kind}: ${p.message}; ${r.events} events before it verify`;
}

/**
 * The `capture inspect` text.
 *
 * @param captureId The capture.
 * @param i The inspection.
 * @returns Text.
 */
export function formatInspection(
  captureId: string,
  i: CaptureInspection,
): string {
  const c = i.capture;
  const lines = [
    `capture ${captureId}${c?.label ? ` (${c.label})` : ""}`,
    `  status     ${c?.status ?? "not indexed"}`,
    `  events     ${i.chain.events}${
      c ? `, ${c.first_timestamp} .. ${c.last_timestamp}` : ""
    }`,
    `  fidelity   ${i.fidelity}`,
    `  ${formatChain(captureId, i.chain)}`,
    "",
    "events by kind:",
    renderTable(
      ["kind", "count"],
      Object.entries(i.counts_by_kind).map(([k, n]) => [k, String(n)]),
    ),
    "",
    "episodes:",
    renderTable(
      [
        "episode",
        "events",
        "sequences",
        "fidelity",
        "started",
        "finished",
        "incomplete calls",
        "tokens in/out",
      ],
      i.episodes.map((e) => [
        e.episode_id,
        String(e.event_count),
        `${e.first_sequence}..${e.last_sequence}`,
        e.fidelity,
        e.started ? "yes" : "no",
        e.finished ? "yes" : "no",
        String(e.incomplete_calls),
        e.tokens
          ? `${e.tokens.input}/${e.tokens.output}${
            e.tokens.partial ? " (partial)" : ""
          }`
          : "-",
      ]),
    ),
    "",
    FIDELITY_LEGEND,
  ];
  return lines.join("\n");
}
