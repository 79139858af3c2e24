/**
 * The gateway benchmark under load (issue 45): upstreams that answer like a
 * model (at once; 300 ms then ~2 KB of JSON; 150 ms to the first chunk then
 * 40 chunks 20 ms apart), at concurrency 1, 8, 64 and 256, through every
 * route (direct, the recording gateway, the gateway not recording,
 * Portkey's gateway, a bare Deno.serve + fetch proxy, nginx). Per route and
 * cell: requests/s against direct, the added p50/p99 (first byte for
 * streams), CPU per request of the process in between, its RSS after the
 * cell, and for the gateways the exchanges recorded against the requests
 * sent.
 *
 * @module
 */
import type { BenchRow } from "./_table.ts";
import {
  type Cell,
  cell,
  HEADERS,
  readStream,
  type Sample,
} from "./_gateway_cells.ts";
import {
  type Arm,
  ARM_NAMES,
  type CellRun,
  perSecond,
  quantile,
  type Route,
  rssMb,
  runCell,
  type Side,
  sorted,
} from "./_gateway_measure.ts";
import { MODEL_LIKE, singleRequest } from "./_model_upstream.ts";

/** How the upstream answers. */
export type UpstreamKind = "instant" | "json" | "stream";

/** A cell of the load table. */
export interface LoadCell extends Cell {
  /** How the upstream answers. */
  upstream: UpstreamKind;
}

const LABELS: Record<UpstreamKind, string> = {
  instant: "instant JSON",
  json: "300 ms then 2 KB JSON",
  stream: "model-like stream (150 ms, then 40 chunks 20 ms apart)",
};

/** Requests per route by upstream and concurrency (8 rounds each). */
const REQUESTS: Record<UpstreamKind, Record<number, number>> = {
  instant: { 1: 800, 8: 2000, 64: 4096, 256: 8192 },
  json: { 1: 48, 8: 192, 64: 1024, 256: 2048 },
  stream: { 1: 32, 8: 128, 64: 512, 256: 2048 },
};

/** The concurrencies of the load table. */
export const LOAD_CONCURRENCY = [1, 8, 64, 256];

function loadJob(kind: UpstreamKind): Cell["job"] {
  const stream = kind === "stream";
  return (base, extra = {}) =>
    Promise.resolve(async (n: number): Promise<Sample[]> => {
      const body = singleRequest(n, stream);
      if (kind !== "instant") body.model = MODEL_LIKE[kind];
      const t0 = performance.now();
      const res = await fetch(`${base}/v1/chat/completions`, {
        method: "POST",
        headers: { ...HEADERS, ...extra },
        body: JSON.stringify(body),
      });
      if (stream) return [await readStream(res, t0)];
      const text = await res.text();
      const t = performance.now() - t0;
      if (res.status !== 200) {
        throw new Error(`answered ${res.status}: ${text.slice(0, 200)}`);
      }
      return [{ first: t, last: t }];
    });
}

/**
 * The load cells, in the order run.
 *
 * @returns Every upstream at every concurrency.
 */
export function loadCells(): LoadCell[] {
  const out: LoadCell[] = [];
  for (const kind of ["instant", "json", "stream"] as const) {
    for (const c of LOAD_CONCURRENCY) {
      out.push({
        ...cell(`load: ${LABELS[kind]}`, c, loadJob(kind), {
          stream: kind === "stream",
        }),
        upstream: kind,
        requests: REQUESTS[kind][c],
        ...(kind === "instant" ? {} : { warm: Math.max(2, c) }),
      });
    }
  }
  return out;
}

/** The model gateway's counters on `/health`, as the bench reads them. */
interface HealthCounts {
  requests: number;
  recorded: number;
  queued: number;
}

async function healthCounts(url: string): Promise<HealthCounts | null> {
  try {
    const res = await fetch(`${url}/health`);
    const h = await res.json();
    const g = h?.model_gateway;
    if (!g) return null;
    return {
      requests: Number(g.requests ?? 0),
      recorded: Number(g.recorded ?? 0),
      queued: Number(g.queued ?? 0),
    };
  } catch {
    return null;
  }
}

/** A gateway's counters once its recording queue is empty (at most 30 s). */
async function settledCounts(url: string): Promise<HealthCounts | null> {
  for (let i = 0; i < 600; i++) {
    const h = await healthCounts(url);
    if (h === null || h.queued === 0) return h;
    await new Promise((r) => setTimeout(r, 50));
  }
  return await healthCounts(url);
}

/** What one route measured in one load cell. */
export interface LoadSide {
  /** Latency, rate and CPU. */
  side: Side;
  /** RSS of the process in between after the cell (MB), null for direct. */
  rss: number | null;
  /** Requests the gateway saw and recorded during the cell (gateways only). */
  recorded: { requests: number; recorded: number } | null;
}

const GATEWAYS = new Set<Arm>(["via", "norecord", "base"]);

/**
 * Run one load cell over the routes, then read each route's RSS and, for
 * the gateways, what they recorded.
 *
 * @param c The cell.
 * @param run The routes and the upstream.
 * @returns Per route.
 */
export async function runLoadCell(
  c: LoadCell,
  run: CellRun,
): Promise<Map<Arm, LoadSide>> {
  const before = new Map<Arm, HealthCounts | null>();
  for (const r of run.routes) {
    if (GATEWAYS.has(r.arm)) before.set(r.arm, await settledCounts(r.url));
  }
  const sides = await runCell(c, run);
  const out = new Map<Arm, LoadSide>();
  for (const r of run.routes) {
    const pids = await r.pids();
    let recorded: LoadSide["recorded"] = null;
    const b = before.get(r.arm);
    if (b) {
      const a = await settledCounts(r.url);
      if (a) {
        recorded = {
          requests: a.requests - b.requests,
          recorded: a.recorded - b.recorded,
        };
      }
    }
    out.set(r.arm, {
      side: sides.get(r.arm)!,
      rss: pids.length ? await rssMb(pids) : null,
      recorded,
    });
  }
  return out;
}

function ms(x: number): string {
  return `${x < 0 ? "−" : "+"}${Math.abs(x).toFixed(1)}`;
}

function cpuUs(s: Side): number {
  return s.cpu.middle / s.samples.length * 1e6;
}

/**
 * The rows of one load cell: one per route in between, the gateway's with
 * the targets.
 *
 * @param c The cell.
 * @param sides What each route measured.
 * @param routes The routes, in the table's order.
 * @returns The rows.
 */
export function loadRows(
  c: LoadCell,
  sides: Map<Arm, LoadSide>,
  routes: Route[],
): BenchRow[] {
  const direct = sides.get("direct")!.side;
  const key: keyof Sample = c.stream ? "first" : "last";
  const d = sorted(direct, key);
  const d50 = quantile(d, 0.5);
  const d99 = quantile(d, 0.99);
  const dRate = perSecond(direct);
  const rows: BenchRow[] = [];
  const portkey = sides.get("portkey");
  const bare = sides.get("bare");
  for (const r of routes) {
    if (r.arm === "direct") continue;
    const got = sides.get(r.arm)!;
    const s = sorted(got.side, key);
    const add50 = quantile(s, 0.5) - d50;
    const add99 = quantile(s, 0.99) - d99;
    const ratio = perSecond(got.side) / dRate;
    const cpu = cpuUs(got.side);
    const parts = [
      `${ratio.toFixed(2)}x direct req/s`,
      `${c.stream ? "first byte" : "total"} p50 ${ms(add50)} / p99 ${
        ms(add99)
      } ms`,
      `${cpu.toFixed(0)} µs CPU/req`,
      `RSS ${got.rss ?? "-"} MB`,
    ];
    if (got.recorded) {
      parts.push(
        `recorded ${got.recorded.recorded}/${got.recorded.requests}`,
      );
    }
    const targets: [string, boolean][] = [];
    if (r.arm === "via") {
      if (portkey) {
        targets.push([
          `CPU <= 0.5x Portkey (${(0.5 * cpuUs(portkey.side)).toFixed(0)} µs)`,
          cpu <= 0.5 * cpuUs(portkey.side),
        ]);
      }
      if (c.upstream === "instant" && c.concurrency === 8 && bare) {
        targets.push([
          `CPU <= 1.5x bare Deno (${(1.5 * cpuUs(bare.side)).toFixed(0)} µs)`,
          cpu <= 1.5 * cpuUs(bare.side),
        ]);
      }
      if (c.upstream === "stream") {
        const floor = c.concurrency <= 64 ? 0.95 : 0.9;
        targets.push([`>= ${floor}x direct req/s`, ratio >= floor]);
        if (c.concurrency <= 64 && c.concurrency > 1) {
          targets.push([
            "first byte added p50 <= 5, p99 <= 15 ms",
            add50 <= 5 && add99 <= 15,
          ]);
        }
      }
      if (c.concurrency === 1) {
        targets.push(["added p50 <= 1, p99 <= 5 ms", add50 <= 1 && add99 <= 5]);
      }
      if (got.recorded) {
        targets.push([
          "recorded = requests",
          got.recorded.recorded === got.recorded.requests,
        ]);
      }
      if (c.concurrency === 256) {
        targets.push(["RSS <= 512 MB", (got.rss ?? Infinity) <= 512]);
      }
    }
    rows.push({
      name: `${c.label}: ${ARM_NAMES[r.arm]}`,
      value: parts.join("; "),
      ...(targets.length
        ? {
          target: targets.map(([t]) => t).join("; "),
          met: targets.every(([, ok]) => ok)
            ? "yes"
            : `no (${
              targets.filter(([, ok]) => !ok).map(([t]) => t)
                .join("; ")
            })`,
        }
        : {}),
    });
  }
  return rows;
}
