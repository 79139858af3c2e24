/**
 * The lineage report for people: a table per episode.
 *
 * @module
 */
import type { LineageReport } from "../control/lineage_report.ts";
import { renderTable } from "./table.ts";

function short(v: unknown, n = 40): string {
  const s = typeof v === "string" ? v : JSON.stringify(v);
  const one = s.replace(/\s+/g, " ");
  return one.length > n ? one.slice(0, n - 1) + "…" : one;
}

/**
 * Render a lineage report.
 *
 * @param r The report.
 * @returns Text.
 */
export function formatLineage(r: LineageReport): string {
  const t = r.totals;
  const lines = [
    `lineage of capture ${r.capture_id}: ${t.episodes} episodes, ${t.steps} steps, fidelity ${r.fidelity}`,
    `  identifier-like values ${t.identifier_values}: ${t.attributed} attributed, ${t.unattributed} without a source`,
    `  correlation ${
      Object.entries(r.correlation).map(([k, v]) => `${k} ${v}`).join(", ") ||
      "-"
    }`,
    `  evidence: chain ${
      r.chain.ok ? "ok" : "BROKEN"
    }, ${r.chain.events} events, head ${r.chain.head_hash}`,
  ];
  for (const ep of r.episodes) {
    lines.push(
      "",
      `episode ${ep.episode_id} (fidelity ${ep.fidelity}, outcome ${
        ep.success === null
          ? "not recorded"
          : ep.success
          ? "success"
          : "failure"
      }, ${ep.counts.attributed}/${ep.counts.identifier_values} attributed)`,
    );
    const rows: string[][] = [];
    for (const s of ep.steps) {
      const args = s.arguments.length ? s.arguments : [null];
      args.forEach((a, i) => {
        rows.push([
          i === 0 ? String(s.index) : "",
          i === 0 ? `${s.logical_tool}${s.ok ? "" : " (failed)"}` : "",
          a ? a.arg : "-",
          a ? short(a.value) : "",
          a ? (a.source ?? `no source: ${a.kind.replace("_", "-")}`) : "",
        ]);
      });
    }
    lines.push(
      renderTable(["step", "tool", "argument", "value", "source"], rows),
    );
  }
  return lines.join("\n");
}
