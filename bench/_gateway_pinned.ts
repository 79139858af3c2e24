/**
 * The gateway benchmark's pinned pass: the concurrency-8 cells again with
 * `taskset`, every process in between (gateway, bare proxy, nginx) on CPU 1
 * and the clients and the upstream on CPU 0, so requests/s says whether a
 * proxy keeps up with a core of its own rather than how three processes
 * share two cores; and the ceiling that CPU per request gives.
 *
 * @module
 */
import type { BenchRow } from "./_table.ts";
import {
  type Cell,
  cell,
  CONVERSATION,
  fetchConversation,
  fetchSingle,
  TURNS,
} from "./_gateway_cells.ts";
import {
  type Arm,
  ARM_NAMES,
  type CellRun,
  runCell,
  type Side,
} from "./_gateway_measure.ts";
import { cpuRow, latencyRows, splitRows } from "./_gateway_report.ts";

/**
 * The cells of the pinned pass: concurrency 8, where requests/s says
 * whether the gateway keeps up.
 *
 * @param lastTurn Collects the conversations' last body sizes.
 * @returns The cells.
 */
export function pinnedCells(lastTurn: number[]): Cell[] {
  return [
    cell("fetch, JSON, pinned", 8, fetchSingle(false)),
    cell("fetch, SSE, pinned", 8, fetchSingle(true), { stream: true }),
    cell(`${CONVERSATION}, pinned`, 8, fetchConversation(lastTurn), {
      perJob: TURNS,
    }),
  ];
}

/**
 * Pin every thread of a process to one CPU (`taskset -a -p -c`); false
 * when that cannot be done here (no taskset, one core).
 */
async function pin(pid: number, cpu: number): Promise<boolean> {
  try {
    const out = await new Deno.Command("taskset", {
      args: ["-a", "-p", "-c", String(cpu), String(pid)],
      stdout: "null",
      stderr: "null",
    }).output();
    return out.success;
  } catch {
    return false;
  }
}

/**
 * What a core of its own would let each process in between keep up with,
 * from CPU per request (which others' load changes little): the clients'
 * and upstream's CPU per request going direct over the middle's, at most
 * 1. At 0.80 or more the middle keeps up with 0.8x direct when it has a
 * core and the client and upstream share the other.
 */
function ceilingRow(cell: Cell, sides: Map<Arm, Side>): BenchRow {
  const direct = sides.get("direct")!;
  const ends = (direct.cpu.client + direct.cpu.upstream) /
    direct.samples.length;
  const others = [...sides].filter(([arm]) => arm !== "direct");
  const via = sides.get("via")!;
  const ratio = (side: Side) =>
    Math.min(1, ends / (side.cpu.middle / side.samples.length));
  return {
    name: `${cell.label}: one core's ceiling vs direct (CPU per request)`,
    value:
      others.map(([arm, side]) =>
        `${ARM_NAMES[arm]} ${ratio(side).toFixed(2)}x`
      ).join(" | ") +
      ` (direct: client + upstream ${
        Math.round(ends * 1e6)
      } µs; 0.80x needs <= ${Math.round(ends / 0.8 * 1e6)} µs in between)`,
    target: ">= 0.80x direct",
    met: ratio(via) >= 0.8 ? "yes" : "no",
  };
}

/**
 * Pin the processes (this one and the upstream on CPU 0, each process in
 * between on CPU 1) and run the cells. Nothing runs when pinning fails
 * (said on stderr).
 *
 * @param cells The pinned cells.
 * @param run The routes, the upstream, requests per route.
 * @returns The rows: the gateway against direct, every route beside it,
 *   CPU per request and the ceiling.
 */
export async function pinnedPass(
  cells: Cell[],
  run: CellRun,
): Promise<{ latency: BenchRow[]; byRoute: BenchRow[]; cpu: BenchRow[] }> {
  const out = {
    latency: [] as BenchRow[],
    byRoute: [] as BenchRow[],
    cpu: [] as BenchRow[],
  };
  if (cells.length === 0) return out;
  let ok = await pin(Deno.pid, 0) && await pin(run.upstreamPid, 0);
  for (const r of run.routes) {
    for (const pid of ok ? await r.pids() : []) ok = ok && await pin(pid, 1);
  }
  if (!ok) {
    console.error("gateway bench: taskset failed, no pinned pass");
    return out;
  }
  const split = run.routes.length > 2;
  for (const c of cells) {
    console.error(`gateway bench: ${c.label}`);
    const sides = await runCell(c, run);
    out.latency.push(...latencyRows(c, sides));
    if (split) out.byRoute.push(...splitRows(c, sides));
    out.cpu.push(cpuRow(c, sides), ceilingRow(c, sides));
  }
  return out;
}
