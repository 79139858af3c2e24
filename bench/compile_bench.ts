/**
 * Compile benchmark: time and peak memory for 100, 1,000 and 10,000
 * episodes of the order desk (about 20 events each), each in a fresh
 * process; the scaling ratio 10× episodes → time.
 *
 * @module
 */
import { type BenchRow, printTable } from "./_table.ts";

const CHILD = new URL("./_compile_once.ts", import.meta.url).pathname;

/**
 * Run the compile benchmark.
 *
 * @param sizes Episode counts.
 * @returns The rows printed.
 */
export async function compileBench(
  sizes = [100, 1_000, 10_000],
): Promise<BenchRow[]> {
  const results: {
    episodes: number;
    events: number;
    seconds: number;
    peak_rss_bytes: number;
    replay: string;
  }[] = [];
  for (const n of sizes) {
    // GNU time reports the child's peak resident set (Deno cannot read /proc).
    const out = await new Deno.Command("/usr/bin/time", {
      args: [
        "-f",
        "MAXRSS_KB %M",
        Deno.execPath(),
        "run",
        "--allow-read",
        "--allow-write=/tmp",
        "--allow-env",
        CHILD,
        String(n),
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const err = new TextDecoder().decode(out.stderr);
    if (!out.success) throw new Error(`compile child failed: ${err}`);
    const kb = Number(/MAXRSS_KB (\d+)/.exec(err)?.[1] ?? NaN);
    results.push({
      ...JSON.parse(
        new TextDecoder().decode(out.stdout).trim().split("\n").at(-1)!,
      ),
      peak_rss_bytes: kb * 1024,
    });
  }
  const rows: BenchRow[] = [];
  for (const r of results) {
    const big = r.episodes === 10_000;
    rows.push({
      name: `compile ${r.episodes.toLocaleString("en-US")} episodes (${
        Math.round(r.events / r.episodes)
      } events each), replay ${r.replay}`,
      value: `${r.seconds.toFixed(2)} s, peak ${
        (r.peak_rss_bytes / 2 ** 20).toFixed(0)
      } MiB`,
      target: big ? "<= 10 s, <= 1 GiB" : undefined,
      met: big
        ? (r.seconds <= 10 && r.peak_rss_bytes <= 2 ** 30 ? "yes" : "no")
        : undefined,
    });
  }
  for (let i = 1; i < results.length; i++) {
    const ratio = results[i].seconds / results[i - 1].seconds;
    rows.push({
      name: `  time ratio ${results[i].episodes} / ${
        results[i - 1].episodes
      } episodes`,
      value: ratio.toFixed(1),
      target: "<= 12",
      met: ratio <= 12 ? "yes" : "no",
    });
  }
  printTable("Compiler", rows);
  return rows;
}

if (import.meta.main) await compileBench();
