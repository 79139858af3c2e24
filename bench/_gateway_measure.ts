/**
 * How the gateway benchmark measures: the routes a request can take to the
 * upstream (direct, or through a process in between), the processes it
 * starts, their CPU from /proc (`_thread_cpu.ts` for a cell's rounds), and
 * one cell run route against route in
 * interleaved rounds.
 *
 * @module
 */
import process from "node:process";
import type { Cell, Job, Sample } from "./_gateway_cells.ts";
import { readyLine } from "./_ready_line.ts";
import type { ThreadCpu } from "./_thread_cpu.ts";

/** Rounds per route and cell, the routes' order rotating round by round. */
export const ROUNDS = 8;

/** The ways a request can go to the upstream. */
export type Arm =
  | "direct"
  | "bare"
  | "nginx"
  | "portkey"
  | "norecord"
  | "base"
  | "via";

/** Each way's name in the tables. */
export const ARM_NAMES: Record<Arm, string> = {
  direct: "direct",
  bare: "bare proxy",
  nginx: "nginx",
  portkey: "Portkey",
  norecord: "gateway, no recording",
  base: "gateway before (--baseline)",
  via: "gateway",
};

/** One way to the upstream, and the processes in between (none for direct). */
export interface Route {
  /** Which way. */
  arm: Arm;
  /** Its base URL. */
  url: string;
  /** Headers its requests carry (Portkey's: which upstream), if any. */
  headers?: Record<string, string>;
  /** The processes in between (their CPU is the middle's). */
  pids: () => Promise<number[]>;
  /** Stop what is in between; a gateway's stats, or null. */
  stop: () => Promise<unknown>;
  /** The process whose V8 profile is read (`--cpu-prof`), if any. */
  profiled?: number;
  /** Requests sent this way so far. */
  sent: number;
  /** Conversations among them (a single request is one). */
  conversations: number;
}

/** What one route of a cell measured. */
export interface Side {
  /** Every request's timings. */
  samples: Sample[];
  /** Wall time of the rounds. */
  ms: number;
  /** CPU seconds: this process, the ones in between, the upstream. */
  cpu: { client: number; middle: number; upstream: number };
}

/** A process started by the benchmark, once it printed its ready line. */
export interface Proc {
  /** The process. */
  child: Deno.ChildProcess;
  /** The ready line's match. */
  match: RegExpExecArray;
  /** The rest of stdout, once the process closes it. */
  tail: Promise<string>;
}

/**
 * Start `deno <args>` and wait for a stdout line matching `pattern`.
 *
 * @param args Deno's arguments.
 * @param options The ready line, and stdin (piped: closing it stops the process).
 * @returns The process.
 */
export async function startProc(
  args: string[],
  options: { ready: RegExp; stdin?: "piped" | "null" },
): Promise<Proc> {
  const child = new Deno.Command(Deno.execPath(), {
    args,
    stdin: options.stdin ?? "null",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const { match, tail } = await readyLine(child.stdout, options.ready);
  return { child, match, tail };
}

/**
 * Stop a process started with piped stdin.
 *
 * @param proc The process.
 * @returns Its last stdout line, parsed.
 */
export async function stopChild(proc: Proc): Promise<unknown> {
  await proc.child.stdin.close();
  const tail = (await proc.tail).trim();
  await proc.child.status;
  return JSON.parse(tail.split("\n").at(-1) || "null");
}

/**
 * CPU seconds of a process (`/proc/<pid>/stat` through `cat`: only -A may
 * read /proc).
 *
 * @param pid The process.
 * @returns Its user + system CPU seconds (10 ms ticks).
 */
export async function cpuSeconds(pid: number): Promise<number> {
  const out = await new Deno.Command("cat", { args: [`/proc/${pid}/stat`] })
    .output();
  const f = new TextDecoder().decode(out.stdout).split(") ")[1].split(" ");
  return (Number(f[11]) + Number(f[12])) / 100;
}

/**
 * Resident memory of some processes together (`VmRSS` in
 * `/proc/<pid>/status`, through `cat`).
 *
 * @param pids The processes.
 * @returns Their summed RSS in MB.
 */
export async function rssMb(pids: number[]): Promise<number> {
  let kb = 0;
  for (const pid of pids) {
    const out = await new Deno.Command("cat", {
      args: [`/proc/${pid}/status`],
    }).output();
    const m = /VmRSS:\s*(\d+)/.exec(new TextDecoder().decode(out.stdout));
    kb += m ? Number(m[1]) : 0;
  }
  return Math.round(kb / 1024);
}

/** This process's CPU seconds. */
export function ownCpuSeconds(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

/** Run `jobs` jobs, `concurrency` at a time; `next` numbers them. */
async function round(
  job: Job,
  jobs: number,
  concurrency: number,
  next: () => number,
): Promise<{ samples: Sample[]; ms: number }> {
  let left = jobs;
  const samples: Sample[] = [];
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left-- > 0) samples.push(...await job(next()));
    }),
  );
  return { samples, ms: performance.now() - t0 };
}

/** What {@linkcode runCell} runs over. */
export interface CellRun {
  /** The routes, each measured. */
  routes: Route[];
  /** The upstream process (its CPU is counted per route). */
  upstreamPid: number;
  /** Requests per route. */
  perSide: number;
  /** Numbers the jobs (every request its own conversation). */
  next: () => number;
  /** Reads the processes' CPU, thread by thread, to the nanosecond. */
  cpu: ThreadCpu;
}

/**
 * Wait until processes stop using CPU (less than 5 ms of it in 50 ms), at
 * most two seconds.
 *
 * @param pids The processes (none: nothing to wait for).
 * @param cpu Reads their CPU.
 */
async function untilIdle(pids: number[], cpu: ThreadCpu): Promise<void> {
  if (pids.length === 0) return;
  let last = await cpu.seconds(pids);
  for (let i = 0; i < 40; i++) {
    await new Promise((r) => setTimeout(r, 50));
    const now = await cpu.seconds(pids);
    if (now - last < 0.005) return;
    last = now;
  }
}

/**
 * One cell: warm every route up, then {@linkcode ROUNDS} rounds per route,
 * the routes' order rotating round by round.
 *
 * @param cell The cell.
 * @param run The routes, the upstream, requests per route.
 * @returns What each route measured.
 */
export async function runCell(
  cell: Cell,
  run: CellRun,
): Promise<Map<Arm, Side>> {
  const { routes, upstreamPid, perSide, next, cpu } = run;
  const jobs = new Map<Arm, Job>();
  for (const r of routes) jobs.set(r.arm, await cell.job(r.url, r.headers));
  const c = cell.concurrency;
  const warm = cell.warm ?? Math.max(c, Math.ceil(200 / cell.perJob));
  for (const r of routes) {
    r.sent += (await round(jobs.get(r.arm)!, warm, c, next)).samples.length;
    r.conversations += warm;
  }
  const perRound =
    Math.ceil((cell.requests ?? perSide) / cell.perJob / ROUNDS / c) * c;
  const sides = new Map<Arm, Side>(routes.map((r) => [r.arm, {
    samples: [],
    ms: 0,
    cpu: { client: 0, middle: 0, upstream: 0 },
  }]));
  for (let k = 0; k < ROUNDS; k++) {
    for (let i = 0; i < routes.length; i++) {
      const r = routes[(i + k) % routes.length];
      const pids = await r.pids();
      const m0 = await cpu.seconds(pids);
      const u0 = await cpu.seconds([upstreamPid]);
      const c0 = ownCpuSeconds();
      const got = await round(jobs.get(r.arm)!, perRound, c, next);
      const side = sides.get(r.arm)!;
      side.cpu.client += ownCpuSeconds() - c0;
      // What a gateway recorded after its answers (the queue a round leaves)
      // is its work: counted here, and never run into the next route's round.
      await untilIdle(pids, cpu);
      side.cpu.middle += await cpu.seconds(pids) - m0;
      side.cpu.upstream += await cpu.seconds([upstreamPid]) - u0;
      side.samples.push(...got.samples);
      side.ms += got.ms;
      r.sent += got.samples.length;
      r.conversations += perRound;
    }
  }
  return sides;
}

/**
 * The p-quantile of sorted numbers.
 *
 * @param sorted Ascending.
 * @param p 0 to 1.
 * @returns The value.
 */
export function quantile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

/**
 * One timing of every request of a side, ascending.
 *
 * @param side The side.
 * @param key First or last byte.
 * @returns The sorted timings.
 */
export function sorted(side: Side, key: keyof Sample): number[] {
  return side.samples.map((s) => s[key]).sort((a, b) => a - b);
}

/**
 * Requests per second of a side.
 *
 * @param side The side.
 * @returns Its rate over its rounds' wall time.
 */
export function perSecond(side: Side): number {
  return side.samples.length / side.ms * 1000;
}
