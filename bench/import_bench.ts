/**
 * Import memory: a generated τ² file (the real retail slice's simulations
 * repeated, `--mb` megabytes, 200 by default) imported by `ingest.ts import`
 * (streamed: a trajectory at a time) and, for comparison in the same run,
 * the way the import read files before (whole: read, parsed and converted
 * in memory, one append). Each runs in its own process; the figure is its
 * peak resident memory as GNU `/usr/bin/time -f %M` reports it.
 * `deno task bench import [--mb N]`.
 *
 * @module
 */
import { join } from "node:path";
import { type BenchRow, printTable } from "./_table.ts";

const CHILD = new URL("./_import_child.ts", import.meta.url).pathname;
const SLICE = new URL("../fixtures/tau2_retail_slice.json", import.meta.url);

/** Write a τ² file of about `mb` megabytes; returns its size in bytes. */
async function writeBigFile(path: string, mb: number): Promise<number> {
  const d = JSON.parse(await Deno.readTextFile(SLICE));
  const sims = d.simulations as Record<string, unknown>[];
  const { simulations: _, ...head } = d;
  const file = await Deno.open(path, { write: true, create: true });
  const enc = new TextEncoder();
  let size = 0;
  const put = async (text: string) => {
    const bytes = enc.encode(text);
    size += bytes.length;
    await file.write(bytes);
  };
  await put(JSON.stringify(head).slice(0, -1) + ',"simulations":[');
  for (let i = 0; size < mb * 1024 * 1024; i++) {
    const sim = {
      ...sims[i % sims.length],
      id: `sim_${i}`,
      trial: Math.floor(i / sims.length),
    };
    await put((i ? "," : "") + JSON.stringify(sim));
  }
  await put("]}");
  file.close();
  return size;
}

async function importOnce(
  mode: "streamed" | "whole",
  file: string,
  root: string,
): Promise<{ peak_rss_kb: number; ms: number }> {
  const out = await new Deno.Command("/usr/bin/time", {
    args: [
      "-f",
      "peak_rss_kb=%M",
      Deno.execPath(),
      "run",
      "--allow-read",
      "--allow-write",
      "--allow-env",
      CHILD,
      mode,
      file,
      root,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const err = new TextDecoder().decode(out.stderr);
  if (!out.success) throw new Error(`the ${mode} import failed: ${err}`);
  const peak = /peak_rss_kb=(\d+)/.exec(err);
  return {
    ...JSON.parse(new TextDecoder().decode(out.stdout)),
    peak_rss_kb: Number(peak?.[1] ?? NaN),
  };
}

/**
 * Run the import benchmark.
 *
 * @param args `--mb N`: the file's size in megabytes.
 * @returns The rows printed.
 */
export async function importBench(args: string[] = []): Promise<BenchRow[]> {
  const at = args.indexOf("--mb");
  const mb = at >= 0 ? Number(args[at + 1]) : 200;
  const dir = await Deno.makeTempDir({ prefix: "harness_bench_import_" });
  try {
    const rows: BenchRow[] = [];
    const mib = (kb: number) => `${(kb / 1024).toFixed(0)} MiB`;
    const figure = (r: { peak_rss_kb: number; ms: number }, size: number) =>
      `${mib(r.peak_rss_kb)} (${
        (r.peak_rss_kb * 1024 / size).toFixed(2)
      }× the file), ${(r.ms / 1000).toFixed(1)} s`;
    // Bounded means flat in the file's size: a quarter-size file first.
    const small = join(dir, "small.json");
    const smallSize = await writeBigFile(small, mb / 4);
    const base = await importOnce("streamed", small, join(dir, "s"));
    await Deno.remove(small);
    rows.push({
      name: `import of a ${
        (smallSize / 2 ** 20).toFixed(0)
      } MiB τ² file, streamed: peak RSS`,
      value: figure(base, smallSize),
    });
    const file = join(dir, "big.json");
    const size = await writeBigFile(file, mb);
    const streamed = await importOnce("streamed", file, join(dir, "a"));
    rows.push({
      name: `import of a ${
        (size / 2 ** 20).toFixed(0)
      } MiB τ² file, streamed: peak RSS`,
      value: figure(streamed, size),
      target: "within 64 MiB of the quarter-size file's",
      met: streamed.peak_rss_kb - base.peak_rss_kb < 64 * 1024 ? "yes" : "no",
    });
    const whole = await importOnce("whole", file, join(dir, "b"));
    rows.push({
      name: "the same file read, parsed and converted whole (before)",
      value: figure(whole, size),
    });
    printTable("Import memory", rows);
    return rows;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
