/**
 * Lineage benchmark: normalization (exact lineage of every argument) of an
 * episode of 200 steps whose results hold 10,000 values each, beside a
 * plain walk over the same results (a JSON.stringify of each) in the same
 * run.
 *
 * @module
 */
import { normalizeEpisode } from "../lib/lineage/normalize.ts";
import type { Episode } from "../lib/lineage/records.ts";
import { HashChainer } from "../lib/trace/chain.ts";
import {
  toolCallCompleted,
  toolCallStarted,
  type TraceEvent,
} from "../lib/trace/mod.ts";
import { type BenchRow, printTable } from "./_table.ts";

function bigEpisode(steps: number, valuesPerResult: number): Episode {
  const ctx = {
    captureId: "bench",
    episodeId: "ep",
    source: { host: "bench", adapter: "bench", model: null },
  };
  const chain = new HashChainer();
  const events: TraceEvent[] = [];
  let prevId = "U-0";
  for (let s = 0; s < steps; s++) {
    const rows = Array.from({ length: valuesPerResult / 4 }, (_, i) => ({
      id: `R-${s}-${i}`,
      owner: `U-${s}-${i}`,
      total: s * 100_000 + i + 0.5,
      status: i % 2 ? "open" : "closed",
    }));
    const tool = { host_name: `tool_${s % 7}`, logical_id: null };
    const args = {
      ref: prevId,
      page: s % 5,
      note: `see R-${Math.max(0, s - 1)}-3 now`,
    };
    const st =
      chain.seal(toolCallStarted(ctx, { tool, arguments: args })).event;
    events.push(st);
    events.push(
      chain.seal(
        toolCallCompleted(ctx, { tool, arguments: args, result: { rows } }, {
          parentEventId: st.event_id,
        }),
      ).event,
    );
    prevId = `R-${s}-${(s * 37) % (valuesPerResult / 4)}`;
  }
  return { capture_id: "bench", episode_id: "ep", events };
}

/**
 * Run the lineage benchmark.
 *
 * @returns The rows printed.
 */
export function lineageBench(): BenchRow[] {
  const ep = bigEpisode(200, 10_000);
  let t0 = performance.now();
  let chars = 0;
  for (const e of ep.events) chars += JSON.stringify(e.payload).length;
  const walkS = (performance.now() - t0) / 1000;
  t0 = performance.now();
  const norm = normalizeEpisode(ep);
  const s = (performance.now() - t0) / 1000;
  const attributed =
    norm.steps.filter((x) => x.arg_lineage.ref !== null).length;
  const rows: BenchRow[] = [
    {
      name: "JSON.stringify of the same events (baseline)",
      value: `${walkS.toFixed(2)} s (${(chars / 1e6).toFixed(0)} MB)`,
    },
    {
      name: "lineage of a 200-step episode, 10k values per result",
      value: `${s.toFixed(2)} s (${attributed}/200 refs attributed)`,
      target: "<= 1 s",
      met: s <= 1 ? "yes" : "no",
    },
    { name: "  ratio to the baseline", value: (s / walkS).toFixed(1) },
  ];
  printTable("Lineage", rows);
  return rows;
}

if (import.meta.main) lineageBench();
