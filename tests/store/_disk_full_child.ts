/**
 * Child process of the disk-full test, run by it inside a user and mount
 * namespace on a small tmpfs at `ROOT`'s parent: a real ingest server over
 * a store there, filled with events until writes fail; then what the read
 * routes and `/health` say, which files are left, and what happens once
 * space is freed. Prints one JSON report on stdout.
 *
 * @module
 */
import { join } from "node:path";
import { HarnessStore } from "../../lib/store/mod.ts";
import { IngestServer } from "../../lib/ingest/server.ts";
import { planTrajectoryFile } from "../../lib/importers/import_file.ts";

const SLICE =
  new URL("../../fixtures/tau2_retail_slice.json", import.meta.url).pathname;

const [fsDir] = Deno.args;
const root = join(fsDir, "store");
const ballast = join(fsDir, "ballast");
// Room to free later: 256 KiB of the tmpfs.
Deno.writeFileSync(ballast, new Uint8Array(256 * 1024));

function event(n: number, size: number): string {
  return JSON.stringify({
    schema_version: "harness.trace.v1",
    event_id: `ev_${n}`,
    capture_id: "cap_full",
    episode_id: "ep_1",
    timestamp: "2026-11-27T00:00:00.000Z",
    source: { host: "test", adapter: "test", model: null },
    actor: "tool",
    kind: "message",
    parent_event_id: null,
    // Distinct text per event: every big one is a new blob.
    payload: { role: "user", text: `${n} `.repeat(size / 4).slice(0, size) },
  });
}

async function getJson(
  url: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.json() };
}

function blobTemporaries(): string[] {
  const dir = join(root, "blobs", "sha256");
  return [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) =>
    n.includes(".tmp-")
  );
}

const report: Record<string, unknown> = {};
{
  using store = new HarnessStore(root, {
    blobThreshold: 4096,
    indexFlushMs: 20,
  });
  const server = new IngestServer(store, { port: 0 });
  const url = await server.start();
  try {
    let acked = 0;
    let refused = 0;
    let n = 0;
    // Big events (blobs) until they fail, then small ones (spool lines)
    // until they fail too: the disk is full to the last few hundred bytes.
    for (const size of [60_000, 3_000, 300]) {
      for (let misses = 0; misses < 3 && n < 10_000;) {
        const res = await fetch(`${url}/ingest`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: event(++n, size),
        });
        const body = await res.json();
        if (res.ok) acked++;
        else {
          refused++;
          misses++;
          report.write_error ??= body.error;
          report.write_status ??= res.status;
        }
      }
    }
    report.acked = acked;
    report.refused = refused;
    // A streamed import on the full disk: refused, nothing of it kept.
    const plan = await planTrajectoryFile({
      format: "tau2",
      path: SLICE,
      captureId: "cap_import",
    });
    try {
      await plan.write(store.sink("cap_import"));
      report.import_full = "written";
    } catch (err) {
      report.import_full = (err as Error).message;
    }
    report.import_spool_left = store.hasCapture("cap_import");
    report.temporaries_while_full = blobTemporaries().length;
    report.health_full = (await getJson(`${url}/health`)).body;
    report.captures_full = await getJson(`${url}/captures`);
    report.summary_full = await getJson(`${url}/capture/cap_full/summary`);
    report.health_after_reads = (await getJson(`${url}/health`)).body;
    // Free space: writes and reads work again, nothing acknowledged lost.
    Deno.removeSync(ballast);
    const again = await fetch(`${url}/ingest`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: event(++n, 5_000),
    });
    await again.body?.cancel();
    report.after_free_status = again.status;
    if (again.ok) acked++;
    report.acked_total = acked;
    report.captures_freed = await getJson(`${url}/captures`);
    report.health_freed = (await getJson(`${url}/health`)).body;
    const verified = await store.verifyCapture("cap_full");
    report.chain_ok = verified.ok;
    report.chain_events = verified.events;
  } finally {
    await server.close();
  }
}
// A blob write a killed process left: the next writer removes it.
const stale = join(root, "blobs", "sha256", `${"ab".repeat(32)}.tmp-1-1`);
Deno.writeFileSync(stale, new Uint8Array(10));
{
  using store = new HarnessStore(root);
  report.temporaries_after_reopen = blobTemporaries().length;
  report.reopen_findings = store.findings.map((f) => f.kind);
  report.reopen_events = store.getCapture("cap_full")?.event_count ?? null;
}
console.log(JSON.stringify(report));
