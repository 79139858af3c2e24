/**
 * The gateway benchmark's report: the rows of each cell (added latency
 * against direct, every route beside the gateway, CPU per request by
 * process) and the writer of the tables to stdout and
 * `bench/out/gateway.md` (`gateway_profile.md` for a profiled run).
 *
 * @module
 */
import { join } from "node:path";
import { renderTable } from "../lib/cli/table.ts";
import { type BenchRow, printTable, rate } from "./_table.ts";
import type { Cell, Sample } from "./_gateway_cells.ts";
import { TURNS } from "./_gateway_cells.ts";
import {
  type Arm,
  ARM_NAMES,
  perSecond,
  quantile,
  ROUNDS,
  type Side,
  sorted,
} from "./_gateway_measure.ts";

const OUT = new URL("./out/", import.meta.url).pathname;

/** What each route's process in between is called in the CPU rows. */
const MIDDLE: Record<Arm, string> = {
  direct: "",
  bare: "proxy",
  nginx: "nginx",
  portkey: "Portkey",
  norecord: "gateway",
  base: "gateway",
  via: "gateway",
};

/** Milliseconds, three decimals. */
function ms(x: number): string {
  return x.toFixed(3);
}

/** An added time with its sign. */
function added(x: number): string {
  return `${x < 0 ? "−" : "+"}${ms(Math.abs(x))}`;
}

/**
 * The issue's figures: the gateway against direct.
 *
 * @param cell The cell.
 * @param sides What each route measured.
 * @returns p50/p99 added, and requests/s at concurrency > 1.
 */
export function latencyRows(cell: Cell, sides: Map<Arm, Side>): BenchRow[] {
  const direct = sides.get("direct")!;
  const via = sides.get("via")!;
  const rows: BenchRow[] = [];
  const metrics: [string, keyof Sample][] = cell.stream
    ? [["first byte", "first"], ["last byte", "last"]]
    : [["total", "last"]];
  for (const [what, key] of metrics) {
    const d = sorted(direct, key);
    const v = sorted(via, key);
    for (const [p, limit] of [[0.5, 1], [0.99, 5]] as const) {
      const dq = quantile(d, p);
      const vq = quantile(v, p);
      rows.push({
        name: `${cell.label}: ${what} p${p * 100} (direct → via)`,
        value: `${ms(dq)} → ${ms(vq)} ms (${added(vq - dq)})`,
        target: `added <= ${limit} ms`,
        met: vq - dq <= limit ? "yes" : "no",
      });
    }
  }
  if (cell.concurrency > 1) {
    const d = perSecond(direct);
    const v = perSecond(via);
    rows.push({
      name: `${cell.label}: requests/s (direct → via)`,
      value: `${rate(d)} → ${rate(v)} (${(v / d).toFixed(2)}x)`,
      target: ">= 0.80x direct",
      met: v / d >= 0.8 ? "yes" : "no",
    });
  }
  return rows;
}

/**
 * Every route against direct, on the cell's main figure (first byte of a
 * stream).
 *
 * @param cell The cell.
 * @param sides What each route measured.
 * @returns Added p50 and p99 per route, and requests/s at concurrency > 1.
 */
export function splitRows(cell: Cell, sides: Map<Arm, Side>): BenchRow[] {
  const key: keyof Sample = cell.stream ? "first" : "last";
  const d = sorted(sides.get("direct")!, key);
  const others = [...sides].filter(([arm]) => arm !== "direct");
  const rows: BenchRow[] = [0.5, 0.99].map((p) => ({
    name: `${cell.label}: added ${cell.stream ? "first byte" : "total"} p${
      p * 100
    }`,
    value:
      others.map(([arm, side]) =>
        `${ARM_NAMES[arm]} ${
          added(quantile(sorted(side, key), p) - quantile(d, p))
        }`
      ).join(" | ") + " ms",
  }));
  if (cell.concurrency > 1) {
    rows.push({
      name: `${cell.label}: requests/s vs direct`,
      value: others.map(([arm, side]) =>
        `${ARM_NAMES[arm]} ${
          (perSecond(side) / perSecond(sides.get("direct")!)).toFixed(2)
        }x`
      ).join(" | "),
    });
  }
  return rows;
}

/**
 * CPU per request of each process, per route.
 *
 * @param cell The cell.
 * @param sides What each route measured.
 * @returns One row.
 */
export function cpuRow(cell: Cell, sides: Map<Arm, Side>): BenchRow {
  const us = (side: Side, k: keyof Side["cpu"]) =>
    Math.round(side.cpu[k] / side.samples.length * 1e6);
  return {
    name: `${cell.label}: CPU µs per request`,
    value: [...sides].map(([arm, side]) =>
      `${ARM_NAMES[arm]}: client ${us(side, "client")}${
        arm === "direct" ? "" : `, ${MIDDLE[arm]} ${us(side, "middle")}`
      }, upstream ${us(side, "upstream")}`
    ).join(" | "),
  };
}

/** The machine, in one line. */
async function machine(): Promise<string> {
  let cpu = "";
  try {
    const out = await new Deno.Command("cat", { args: ["/proc/cpuinfo"] })
      .output();
    cpu = /model name\s*:\s*(.+)/.exec(new TextDecoder().decode(out.stdout))
      ?.[1] ?? "";
  } catch {
    // Not Linux: the core count says enough.
  }
  return `deno ${Deno.version.deno}, ${navigator.hardwareConcurrency} cores${
    cpu ? ` (${cpu.trim()})` : ""
  }`;
}

/** What the report says of the run. */
export interface GatewayReport {
  /** The tables, titled, in order (empty ones left out). */
  tables: [string, BenchRow[]][];
  /** Requests per cell and route. */
  perSide: number;
  /** The routes beside direct and the gateway ran (not `--quick`). */
  split: boolean;
  /** How nginx ran, or why it did not (null: not asked). */
  nginx: string | null;
  /** How Portkey ran, or why it did not (null: no load table or not asked). */
  portkey?: string | null;
  /** The baseline checkout measured beside (`--baseline`), or null. */
  baseline: string | null;
  /** The pinned pass ran. */
  pinned: boolean;
  /** The gateways ran under V8's profiler (`--cpu-prof`). */
  profiled: boolean;
  /** When the run started. */
  started: Date;
}

/**
 * Print the tables and write them, with what the run was, as Markdown.
 *
 * @param r The run's tables and settings.
 */
export async function writeGatewayReport(r: GatewayReport): Promise<void> {
  const tables = r.tables.filter(([, rows]) => rows.length > 0);
  for (const [title, rows] of tables) printTable(title, rows);
  const note = `${await machine()}; ${r.started.toISOString().slice(0, 10)}`;
  const md = [
    "# Model gateway benchmark (`deno task bench gateway`)",
    "",
    note,
    "",
    `Latency a model request gains by going through the ingest server's model gateway (a real \`IngestServer\`, recording on, temp store) instead of straight to the upstream (a local OpenAI Chat Completions server answering at once: \`bench/_model_upstream.ts\`). The gateway processes run with the V8 flags \`deno task serve\` gives the server (a baseline's with its own serve task's). Separate processes on 127.0.0.1: clients, gateway, upstream${
      r.split
        ? " (and, to split the cost, a bare Deno.serve + fetch proxy, nginx as a reference reverse proxy, and a second gateway with recording off)"
        : ""
    }. ${r.nginx ? `nginx: ${r.nginx}. ` : ""}${
      r.baseline
        ? `"gateway before" is the gateway of another checkout (\`--baseline ${r.baseline}\`) measured in the same rounds. `
        : ""
    }Per cell ${
      r.perSide.toLocaleString("en-US")
    } requests per route after a warm-up, in ${ROUNDS} rounds per route, the routes interleaved (their order rotating round by round). Times are from sending the request: non-streaming to the whole body read; SSE to the first and the last body byte. Keep-alive connections (fetch's pool, the SDK's). Conversation: an agent loop of ${TURNS} turns, each sending the whole history (the model's tool call and a ~2 KB tool result per turn). CPU per request of a process: the time its threads ran, from /proc/<pid>/task/*/schedstat (nanoseconds; it was 10 ms ticks of /proc/<pid>/stat until 2026-11-29).${
      r.pinned
        ? " The pinned cells run after the others with `taskset`: every process in between (gateway, bare proxy, nginx) on CPU 1, the clients and the upstream on CPU 0, direct with the same pinning; so requests/s at c=8 says whether the gateway keeps up with a core of its own rather than how three processes share two cores (other engineers' work still runs on both cores: see the load average). Its ceiling row says the same from CPU per request, which that load changes little: direct's client + upstream CPU per request over the gateway's, the requests/s ratio the gateway would reach with a whole core to itself."
        : ""
    } Targets (issue 32): added p50 <= 1 ms, added p99 <= 5 ms, requests/s at concurrency 8 >= 0.8x direct.${
      r.tables.some(([t, rows]) => t.includes("under load") && rows.length)
        ? ` The load table (issue 45) sends single requests (fetch) to upstreams that answer at once, after 300 ms with ~2 KB of JSON, or as a model-like stream (150 ms to the first chunk, then 40 chunks 20 ms apart), at concurrency 1, 8, 64 and 256, through every route${
          r.portkey ? `, Portkey's gateway among them (${r.portkey})` : ""
        }; per route: requests/s against direct, the added p50/p99 (first byte for streams), the CPU per request of the process in between, its RSS after the cell, and for the gateways the exchanges recorded against the requests they saw in the cell (read from \`/health\` once the recording queue is empty). The issue's targets are on the gateway's rows (recording on).`
        : ""
    }${
      r.profiled
        ? " Profiled run (`--cpu-prof`): the gateway processes ran under V8's sampling profiler, so every time and CPU figure here carries its cost; the last table says where their CPU goes (shares of busy time; phases nest, so recording's parts add up to less than recording whole); `gateway.md` has the figures of a run without it."
        : ""
    }`,
    ...tables.map(([title, rows]) =>
      `\n## ${title}\n\n${
        renderTable(
          ["measure", "value", "target", "met"],
          rows.map((x) => [x.name, x.value, x.target ?? "-", x.met ?? "-"]),
        )
      }`
    ),
    "",
  ].join("\n");
  await Deno.mkdir(OUT, { recursive: true });
  // A profiled run's timings carry the profiler's cost: its own file.
  await Deno.writeTextFile(
    join(OUT, r.profiled ? "gateway_profile.md" : "gateway.md"),
    md,
  );
}
