/**
 * The proxy orphan check for `deno task bench reliability`: a real
 * `proxy.ts` in front of a real upstream is stopped the ways a host stops
 * it (stdin closed while idle, stdin closed with a call that never ends in
 * flight, SIGTERM), again and again; each time it must exit 0 within 3 s,
 * leave no upstream process behind and release the store's lock.
 *
 * @module
 */
import { HarnessStore } from "../lib/store/mod.ts";
import type { BenchRow } from "./_table.ts";

const PROXY = new URL("../proxy.ts", import.meta.url).pathname;
const FLAKY = new URL("../tests/proxy/_flaky_server.ts", import.meta.url)
  .pathname;

/** How a run stops the proxy. */
type Stop = "eof" | "eof-in-flight" | "sigterm";

/** What the runs found. */
export interface ProxyOrphanReport {
  /** Runs done. */
  runs: number;
  /** Runs whose proxy exited 0 within 3 s. */
  clean_exits: number;
  /** Upstream processes still running after their proxy exited. */
  orphans: number;
  /** Runs after which a new writer could not open the store. */
  locked: number;
  /** Slowest exit after the stop, in ms. */
  slowest_ms: number;
}

const encoder = new TextEncoder();

async function childrenOf(pid: number): Promise<number[]> {
  const out = await new Deno.Command("ps", {
    args: ["-o", "pid=", "--ppid", String(pid)],
    stdout: "piped",
  }).output();
  return new TextDecoder().decode(out.stdout).split(/\s+/).filter(Boolean)
    .map(Number);
}

/** Whether a process runs (not a zombie); /proc/PID would need -A. */
async function alive(pid: number): Promise<boolean> {
  const out = await new Deno.Command("ps", {
    args: ["-o", "stat=", "-p", String(pid)],
    stdout: "piped",
  }).output();
  const state = new TextDecoder().decode(out.stdout).trim();
  return state !== "" && !state.startsWith("Z");
}

async function firstLine(
  reader: ReadableStreamDefaultReader<Uint8Array>,
): Promise<string> {
  let text = "";
  const decoder = new TextDecoder();
  while (!text.includes("\n")) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  return text;
}

async function oneRun(root: string, stop: Stop) {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--allow-run",
      "--allow-read",
      `--allow-write=${root}`,
      "--allow-env",
      "--allow-net=127.0.0.1",
      PROXY,
      "--root",
      root,
      "--server",
      "flaky",
      "--",
      Deno.execPath(),
      "run",
      "--quiet",
      "-A",
      FLAKY,
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  const reader = child.stdout.getReader();
  const send = (m: unknown) =>
    writer.write(encoder.encode(JSON.stringify(m) + "\n"));
  let upstreams: number[] = [];
  try {
    await send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "bench", version: "0" },
      },
    });
    await firstLine(reader);
    await send({ jsonrpc: "2.0", method: "notifications/initialized" });
    upstreams = await childrenOf(child.pid);
    if (stop === "eof-in-flight") {
      await send({
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "flaky__hang", arguments: {} },
      });
    }
    const t0 = performance.now();
    if (stop === "sigterm") child.kill("SIGTERM");
    else await writer.close();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const code = await Promise.race([
      child.status.then((s) => s.code),
      new Promise<null>((r) => timer = setTimeout(() => r(null), 3000)),
    ]);
    clearTimeout(timer);
    const ms = performance.now() - t0;
    let opens = true;
    try {
      new HarnessStore(root).close();
    } catch {
      opens = false;
    }
    let orphans = 0;
    for (const pid of upstreams) if (await alive(pid)) orphans++;
    return {
      clean: code === 0,
      orphans,
      opens,
      ms,
    };
  } finally {
    for (const pid of [child.pid, ...upstreams]) {
      try {
        if (await alive(pid)) Deno.kill(pid, "SIGKILL");
      } catch { /* gone */ }
    }
    await writer.close().catch(() => {});
    await reader.cancel().catch(() => {});
    await child.status;
  }
}

/**
 * Stop a real proxy `runs` times, cycling through the ways a host stops it.
 *
 * @param runs How many proxies to start and stop.
 * @returns What was left behind.
 */
export async function proxyOrphans(runs = 30): Promise<ProxyOrphanReport> {
  const report: ProxyOrphanReport = {
    runs: 0,
    clean_exits: 0,
    orphans: 0,
    locked: 0,
    slowest_ms: 0,
  };
  const stops: Stop[] = ["eof", "eof-in-flight", "sigterm"];
  for (let i = 0; i < runs; i++) {
    const root = await Deno.makeTempDir({ prefix: "harness_rel_proxy_" });
    try {
      const r = await oneRun(root, stops[i % stops.length]);
      report.runs++;
      if (r.clean) report.clean_exits++;
      report.orphans += r.orphans;
      if (!r.opens) report.locked++;
      report.slowest_ms = Math.max(report.slowest_ms, r.ms);
    } finally {
      await Deno.remove(root, { recursive: true }).catch(() => {});
    }
  }
  return report;
}

/**
 * The reliability table's row for the proxy orphan check.
 *
 * @param runs How many proxies to start and stop.
 * @returns The row.
 */
export async function proxyOrphanRow(runs = 30): Promise<BenchRow> {
  const t0 = performance.now();
  const r = await proxyOrphans(runs);
  return {
    name:
      `MCP proxy stopped by its host ${r.runs} times (stdin closed idle, stdin closed with a hung call, SIGTERM; ${
        ((performance.now() - t0) / 1000).toFixed(0)
      } s)`,
    value: `${r.clean_exits}/${r.runs} exited 0, slowest ${
      (r.slowest_ms / 1000).toFixed(2)
    } s; ${r.orphans} upstreams left running, ${r.locked} stores left locked`,
    target: "all exit 0 < 3 s, 0 orphans, 0 locked",
    met: r.clean_exits === r.runs && r.slowest_ms < 3000 && r.orphans === 0 &&
        r.locked === 0
      ? "yes"
      : "NO",
  };
}

if (import.meta.main) {
  const { printTable } = await import("./_table.ts");
  printTable("Reliability (proxy)", [
    await proxyOrphanRow(Number(Deno.args[0] ?? 30)),
  ]);
}
