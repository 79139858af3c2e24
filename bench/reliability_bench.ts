/**
 * `deno task bench reliability`: kill -9 of a real ingest server over HTTP
 * 200 times, and a torn-tail sweep over every byte offset of a 4 KiB last
 * line; prints what was lost (must be nothing).
 *
 * @module
 */
import { killOverHttp, tornTailSweep } from "./_reliability.ts";
import { printTable } from "./_table.ts";

/** Run the reliability benchmark. */
export async function reliabilityBench(): Promise<void> {
  const a = await Deno.makeTempDir({ prefix: "harness_rel_" });
  const b = await Deno.makeTempDir({ prefix: "harness_rel_" });
  try {
    const t0 = performance.now();
    const kill = await killOverHttp(a, 200);
    const t1 = performance.now();
    const sweep = await tornTailSweep(b, 4096);
    const t2 = performance.now();
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
    ]);
  } finally {
    await Deno.remove(a, { recursive: true }).catch(() => {});
    await Deno.remove(b, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) await reliabilityBench();
