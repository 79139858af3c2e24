/**
 * `deno task bench reliability`: kill -9 of a real ingest server over HTTP
 * 200 times, a torn-tail sweep over every byte offset of a 4 KiB last
 * line, and a team database that never answers a query (every CLI call
 * errors within 10 s, the replicating server stops within 5 s); prints
 * what was lost (must be nothing).
 *
 * @module
 */
import { killOverHttp, stuckDatabase, tornTailSweep } from "./_reliability.ts";
import { printTable } from "./_table.ts";

/** Run the reliability benchmark. */
export async function reliabilityBench(): Promise<void> {
  const a = await Deno.makeTempDir({ prefix: "harness_rel_" });
  const b = await Deno.makeTempDir({ prefix: "harness_rel_" });
  const c = await Deno.makeTempDir({ prefix: "harness_rel_" });
  try {
    const t0 = performance.now();
    const kill = await killOverHttp(a, 200);
    const t1 = performance.now();
    const sweep = await tornTailSweep(b, 4096);
    const t2 = performance.now();
    const stuck = await stuckDatabase(c);
    const slowest = Math.max(...stuck.calls.map((x) => x.ms));
    printTable("Reliability", [
      {
        name: `kill -9 over HTTP, ${kill.kills} times (${
          ((t1 - t0) / 1000).toFixed(0)
        } s)`,
        value:
          `${kill.acknowledged} acknowledged, ${kill.lost} lost, ${kill.duplicated} duplicated, ${kill.repaired} torn tails repaired`,
        target: "0 lost, 0 duplicated",
        met: kill.lost === 0 && kill.duplicated === 0 && kill.chains_ok
          ? "yes"
          : "NO",
      },
      {
        name: `torn-tail sweep, every offset of a 4096-byte line (${
          ((t2 - t1) / 1000).toFixed(0)
        } s)`,
        value:
          `${sweep.repaired_and_verified}/${sweep.offsets} repaired and verified, ${sweep.set_aside_exactly} set aside exactly`,
        target: "all",
        met: sweep.repaired_and_verified === sweep.offsets &&
            sweep.set_aside_exactly === sweep.offsets
          ? "yes"
          : "NO",
      },
      {
        name:
          `a database that never answers a query: ${stuck.calls.length} CLI calls (${
            stuck.calls.map((x) => x.command).join(", ")
          }), then a server replicating to it stopped`,
        value: `calls errored in ${
          stuck.calls.map((x) => (x.ms / 1000).toFixed(1)).join("/")
        } s (${
          stuck.calls.filter((x) => x.code !== 0 && x.says_why).length
        } saying why); stop ${(stuck.stop_ms / 1000).toFixed(1)} s${
          stuck.stopped_itself ? "" : " (killed)"
        }; ${stuck.acknowledged} acknowledged, ${stuck.lost} lost, ${stuck.lag_events} waiting for the database`,
        target: "each call errors < 10 s, stop < 5 s, 0 lost",
        met: stuck.calls.every((x) => x.code !== 0 && x.says_why) &&
            slowest < 10_000 && stuck.stop_ms < 5_000 &&
            stuck.stopped_itself && stuck.lost === 0
          ? "yes"
          : "NO",
      },
    ]);
  } finally {
    await Deno.remove(a, { recursive: true }).catch(() => {});
    await Deno.remove(b, { recursive: true }).catch(() => {});
    await Deno.remove(c, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) await reliabilityBench();
