/**
 * Human renderings of captures, inspections and chain reports.
 *
 * @module
 */
import type { CaptureRecord } from "../store/index_records.ts";
import type { CaptureInspection, EpisodeInspection } from "../store/inspect.ts";
import {
  type EpisodePackageActivity,
  type PackageTotals,
  tokensSavedText,
} from "../control/package_activity.ts";
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

/** An inspection, with what served packages did where it was gathered. */
export type InspectionView = CaptureInspection & {
  episodes: (EpisodeInspection & { package?: EpisodePackageActivity })[];
  package?: PackageTotals | null;
  capture_events?: number;
};

/**
 * The `capture inspect` text.
 *
 * @param captureId The capture.
 * @param i The inspection.
 * @returns Text.
 */
export function formatInspection(
  captureId: string,
  i: InspectionView,
): string {
  const c = i.capture;
  const lines = [
    `capture ${captureId}${c?.label ? ` (${c.label})` : ""}`,
    `  status     ${c?.status ?? "not indexed"}`,
    `  events     ${i.chain.events}${
      c ? `, ${c.first_timestamp} .. ${c.last_timestamp}` : ""
    }${
      i.capture_events
        ? ` (${i.capture_events} of them the capture's own record: its start and finish)`
        : ""
    }`,
    `  episodes   ${i.episodes.length}`,
    `  fidelity   ${i.fidelity}${fidelityNote(i)}`,
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
    ...formatPackageActivity(i),
    "",
    FIDELITY_LEGEND,
  ];
  return lines.join("\n");
}

/**
 * Why a capture that holds model requests and answers is graded below F4:
 * F3 and F4 need state (snapshots or deltas), which a model gateway or hook
 * capture does not record.
 */
function fidelityNote(i: CaptureInspection): string {
  const k = i.counts_by_kind;
  const model = (k["model.requested"] ?? 0) + (k["model.responded"] ?? 0);
  if (model === 0 || i.fidelity === "F3" || i.fidelity === "F4") return "";
  return ` (model requests and answers are recorded; F3 and F4 need state snapshots or deltas, which this capture has not)`;
}

function n(v: number): string {
  return v.toLocaleString("en-US");
}

function plural(count: number, one: string, many = `${one}s`): string {
  return `${n(count)} ${count === 1 ? one : many}`;
}

function clipJson(v: unknown, max = 160): string {
  const t = typeof v === "string" ? v : JSON.stringify(v ?? null);
  return t.length > max ? t.slice(0, max) + "…" : t;
}

/**
 * What served packages did: totals, then per episode the answers served,
 * the calls refused (arguments, reason) and the pass-throughs (reason).
 *
 * @param i The inspection.
 * @returns Lines (none when no package took part).
 */
export function formatPackageActivity(i: InspectionView): string[] {
  const t = i.package;
  if (!t) return [];
  const r = t.requests;
  const lines = [
    "",
    `package at work (${t.packages.join(", ")}): ${
      plural(t.episodes, "episode")
    }; ${plural(r.served, "answer")} served, ${
      plural(t.refused_calls, "call")
    } refused, ${plural(r.passed_through, "request")} passed through, ${
      n(r.forwarded)
    } forwarded, ${n(r.gave_up)} gave up`,
    `  tokens: ${tokensSavedText(t.tokens_saved)}`,
  ];
  if (t.upstream.refused_answers) {
    const c = t.upstream.refused_tokens;
    lines.push(
      `  refused answers cost ${n(c.input)} in / ${n(c.output)} out tokens (${
        plural(t.upstream.refused_answers, "upstream answer")
      } the agent never saw)`,
    );
  }
  for (const e of i.episodes) {
    const a = e.package;
    if (!a) continue;
    lines.push(`  episode ${e.episode_id}:`);
    const rows: [number, string][] = [];
    for (const s of a.served) {
      rows.push([
        s.sequence,
        s.gave_up
          ? `    gave up   #${s.sequence} answered in words: ${
            clipJson(s.text)
          }`
          : `    served    #${s.sequence} ${
            s.calls.map((c) => `${c.tool} ${clipJson(c.arguments)}`).join(
              ", ",
            ) || clipJson(s.text)
          }`,
      ]);
    }
    for (const c of a.refused) {
      rows.push([
        c.sequence,
        `    refused   #${c.sequence} ${c.tool} ${
          clipJson(c.arguments)
        }: ${c.reason}`,
      ]);
    }
    for (const p of a.passed_through) {
      rows.push([p.sequence, `    passed    #${p.sequence} ${p.reason}`]);
    }
    rows.sort((x, y) => x[0] - y[0]);
    lines.push(...rows.map(([, line]) => line));
    lines.push(`    tokens: ${tokensSavedText(a.tokens_saved)}`);
  }
  return lines;
}
