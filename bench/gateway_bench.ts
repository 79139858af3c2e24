/**
 * Model gateway benchmark (issue 32): the latency the gateway adds to a
 * model request, against the same client going straight to the upstream in
 * the same run. Separate processes on loopback: this one (the clients), a
 * fast local OpenAI Chat Completions upstream (`_model_upstream.ts`), and a
 * real `IngestServer` with its model gateway over a temp store, recording on
 * (this file run with `--gateway-child`).
 *
 * Each cell (client × answer shape × concurrency, `_gateway_cells.ts`)
 * warms every route up, then runs 8 rounds per route, the routes
 * interleaved (their order rotating round by round) so the machine's noise
 * hits all (`_gateway_measure.ts`); the figures are p50/p99 per request,
 * the added latency (via − direct) and, at concurrency 8, requests/s via
 * against direct, with each process's CPU per request beside them
 * (`_gateway_report.ts`). Afterwards the store must hold one
 * `model.requested` per request sent through the gateway.
 *
 * More routes split the added latency: a bare Deno.serve + fetch proxy
 * (what forwarding costs in Deno at all), nginx as a reference reverse proxy
 * (what any proxy reaches here, `_nginx_proxy.ts`), a second gateway with
 * recording off (forwarding and reading the exchange, no events) and, with
 * `--baseline DIR`, the gateway of another checkout (before/after in the
 * same rounds).
 *
 * The load table (issue 45, `_gateway_load.ts`) runs last: upstreams that
 * answer like a model (at once; 300 ms then 2 KB; a 40-chunk stream) at
 * concurrency 1, 8, 64 and 256, through every route and Portkey's gateway
 * (`_portkey.ts`, installed from npm by the bench, skipped with the reason
 * when it cannot be).
 *
 * `deno task bench gateway [--requests N] [--cells TEXT] [--quick]
 * [--cpu-prof DIR] [--pin yes|no] [--nginx yes|no] [--baseline DIR]
 * [--suite all|classic|load] [--portkey yes|no]`: N
 * requests per cell and route (default 2,000); only the cells whose label
 * contains TEXT; `--quick` runs only direct and via the gateway;
 * `--cpu-prof` writes each gateway process's V8 CPU profile into DIR and
 * adds where its CPU goes, phase by phase (`_profile_phases.ts`), writing
 * `bench/out/gateway_profile.md` instead of `gateway.md` (the profiler slows
 * what it measures); `--pin no` skips the pinned pass (`_gateway_pinned.ts`:
 * the c=8 cells again with `taskset`, the processes in between on CPU 1, the
 * clients and the upstream on CPU 0); `--nginx no` leaves nginx out;
 * `--suite` runs the first cells, the load table or both (default);
 * `--portkey no` leaves Portkey out.
 *
 * @module
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { BenchRow } from "./_table.ts";
import { profilePhases, readProfileOf } from "./_profile_phases.ts";
import { allCells } from "./_gateway_cells.ts";
import {
  type Arm,
  ARM_NAMES,
  cpuSeconds,
  ownCpuSeconds,
  ROUNDS,
  rssMb,
  runCell,
  startProc,
} from "./_gateway_measure.ts";
import { pinnedCells, pinnedPass } from "./_gateway_pinned.ts";
import {
  cpuRow,
  latencyRows,
  splitRows,
  writeGatewayReport,
} from "./_gateway_report.ts";
import { bareProxyChild, gatewayChild } from "./_gateway_children.ts";
import { gatewayRoutes } from "./_gateway_routes.ts";
import { loadAverages, machineBusySeconds } from "./_load_probe.ts";
import { type GatewayStats, recordingRows } from "./_gateway_recording.ts";
import { loadCells, loadRows, runLoadCell } from "./_gateway_load.ts";
import { startPortkey } from "./_portkey.ts";
import { ThreadCpu } from "./_thread_cpu.ts";

const UPSTREAM = new URL("./_model_upstream.ts", import.meta.url).pathname;

/**
 * Run the gateway benchmark.
 *
 * @param args `--requests N` per cell and route, `--cells TEXT`,
 *   `--quick` (only direct and via the gateway), `--cpu-prof DIR`,
 *   `--pin yes|no`, `--nginx yes|no`, `--baseline DIR`.
 * @returns The rows printed.
 */
export async function gatewayBench(args: string[] = []): Promise<BenchRow[]> {
  const { values } = parseArgs({
    args,
    options: {
      requests: { type: "string", default: "2000" },
      cells: { type: "string", default: "" },
      quick: { type: "boolean", default: false },
      "cpu-prof": { type: "string" },
      pin: { type: "string", default: "yes" },
      nginx: { type: "string", default: "yes" },
      baseline: { type: "string" },
      suite: { type: "string", default: "all" },
      portkey: { type: "string", default: "yes" },
    },
  });
  if (!["all", "classic", "load"].includes(values.suite)) {
    throw new RangeError(
      `--suite must be all, classic or load, got "${values.suite}"`,
    );
  }
  const perSide = Number(values.requests);
  if (!Number.isInteger(perSide) || perSide < ROUNDS) {
    throw new RangeError(
      `--requests must be an integer of at least ${ROUNDS}, got "${values.requests}"`,
    );
  }
  const lastTurnBytes: number[] = [];
  const classic = values.suite !== "load";
  const cells = classic
    ? allCells(lastTurnBytes).filter((c) => c.label.includes(values.cells))
    : [];
  const load = values.suite !== "classic"
    ? loadCells().filter((c) => c.label.includes(values.cells))
    : [];
  const split = !values.quick;
  const pinned =
    !classic || values.pin === "no" || navigator.hardwareConcurrency < 2
      ? []
      : pinnedCells(lastTurnBytes).filter((c) =>
        c.label.includes(values.cells)
      );
  const load0 = await loadAverages();
  const started = new Date();
  const t0 = performance.now();
  const busy0 = await machineBusySeconds();
  const own0 = ownCpuSeconds();
  const root = await Deno.makeTempDir({ prefix: "harness_gateway_bench_" });
  const up = await startProc(
    ["run", "--allow-net=127.0.0.1", UPSTREAM],
    { ready: /port (\d+)/ },
  );
  const upstream = `http://127.0.0.1:${up.match[1]}`;
  const profDir = values["cpu-prof"];
  const { routes, gateway, nginxNote } = await gatewayRoutes(upstream, {
    root,
    profDir,
    split,
    nginx: values.nginx !== "no",
    baseline: values.baseline,
  });
  let n = 0;
  const run = {
    routes,
    upstreamPid: up.child.pid,
    perSide,
    next: () => n++,
    cpu: new ThreadCpu(),
  };
  const latency: BenchRow[] = [];
  const byRoute: BenchRow[] = [];
  const cpu: BenchRow[] = [];
  const record: BenchRow[] = [];
  const phases: BenchRow[] = [];
  const loaded: BenchRow[] = [];
  let portkeyNote: string | null = null;
  let pin = {
    latency: [] as BenchRow[],
    byRoute: [] as BenchRow[],
    cpu: [] as BenchRow[],
  };
  let children = 0;
  try {
    for (const cell of cells) {
      console.error(`gateway bench: ${cell.label}`);
      const sides = await runCell(cell, run);
      latency.push(...latencyRows(cell, sides));
      if (split) byRoute.push(...splitRows(cell, sides));
      cpu.push(cpuRow(cell, sides));
    }
    pin = await pinnedPass(pinned, run);
    if (load.length > 0) {
      // Portkey joins for the load table only (the first cells' clients
      // send no Portkey headers), last but for the gateway.
      if (split && values.portkey !== "no") {
        const pk = await startPortkey(upstream);
        if ("why" in pk) {
          portkeyNote = `not measured: ${pk.why}`;
          console.error(`gateway bench: Portkey ${portkeyNote}`);
        } else {
          portkeyNote = pk.note;
          routes.splice(routes.length - 1, 0, {
            arm: "portkey",
            url: pk.url,
            headers: pk.headers,
            pids: pk.pids,
            stop: pk.stop,
            sent: 0,
            conversations: 0,
          });
        }
      }
      for (const c of load) {
        console.error(`gateway bench: ${c.label}`);
        loaded.push(...loadRows(c, await runLoadCell(c, run), routes));
      }
    }
  } finally {
    const rss: string[] = [];
    for (const r of routes) {
      for (const pid of await r.pids()) children += await cpuSeconds(pid);
      if (r.arm !== "direct") {
        rss.push(`${ARM_NAMES[r.arm]} ${await rssMb(await r.pids())}`);
      }
    }
    children += await cpuSeconds(up.child.pid);
    const stats = new Map<Arm, GatewayStats | null>();
    for (const r of routes) stats.set(r.arm, await r.stop() as GatewayStats);
    up.child.kill("SIGTERM");
    await up.child.status;
    for (const r of profDir ? routes : []) {
      const got = r.profiled && await readProfileOf(profDir!, r.profiled);
      // Recording's phases are empty but for the recording gateways.
      if (got) {
        phases.push(
          ...profilePhases(got, ARM_NAMES[r.arm], r.sent).filter((row) =>
            r.arm === "via" || r.arm === "base" ||
            !row.name.includes(": record: ")
          ),
        );
      }
    }
    record.push(
      ...recordingRows(join(root, "store"), {
        gateway,
        stats: stats.get("via"),
        rss,
        lastTurnBytes,
      }),
    );
    const wall = (performance.now() - t0) / 1000;
    const busy1 = await machineBusySeconds();
    if (busy0 !== null && busy1 !== null) {
      const others = busy1 - busy0 - (ownCpuSeconds() - own0) - children;
      record.push({
        name: "CPU of other processes on the machine during the run",
        value: `${
          (Math.max(0, others) / wall * 100).toFixed(0)
        }% of one core (of ${navigator.hardwareConcurrency})`,
      });
    }
    record.push(
      {
        name: "load average (1, 5, 15 min) at start → end",
        value: `${load0} → ${await loadAverages()}`,
      },
      { name: "bench wall time", value: `${wall.toFixed(0)} s` },
    );
    await Deno.remove(root, { recursive: true });
  }
  await writeGatewayReport({
    tables: [
      ["Model gateway: added latency per request", latency],
      ["Model gateway: added latency by route", byRoute],
      ["Model gateway: CPU per request by process", cpu],
      ["Model gateway pinned: the gateway on a core of its own", [
        ...pin.latency,
        ...pin.byRoute,
        ...pin.cpu,
      ]],
      ["Model gateway under load (issue 45)", loaded],
      ["Model gateway: recording", record],
      ["Model gateway: where the CPU goes (V8 profile)", phases],
    ],
    perSide,
    split,
    nginx: nginxNote,
    portkey: portkeyNote,
    baseline: values.baseline ?? null,
    pinned: pin.latency.length > 0,
    profiled: profDir !== undefined,
    started,
  });
  return [
    ...latency,
    ...byRoute,
    ...cpu,
    ...pin.latency,
    ...pin.byRoute,
    ...pin.cpu,
    ...record,
    ...phases,
  ];
}

if (import.meta.main) {
  if (Deno.args[0] === "--gateway-child") {
    await gatewayChild(Deno.args[1], {
      upstream: Deno.args[2],
      record: !Deno.args.includes("--no-record"),
      ownClient: !Deno.args.includes("--fetch-client"),
    });
  } else if (Deno.args[0] === "--bare-proxy-child") {
    await bareProxyChild(Deno.args[1]);
  } else await gatewayBench(Deno.args);
}
