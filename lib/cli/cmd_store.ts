/**
 * `demo`, `capture list|inspect|verify` and `store rebuild-index`.
 *
 * @module
 */
import { resolve } from "node:path";
import { HarnessStore } from "../store/store.ts";
import {
  isStoreLocked,
  readLockOwner,
  StoreLockedError,
} from "../store/lock.ts";
import type { CaptureInspection } from "../control/inspect.ts";
import type { CaptureRecord } from "../store/index_db.ts";
import { inspectCapture } from "../control/inspect.ts";
import {
  formatCaptureList,
  formatChain,
  formatInspection,
} from "./format_capture.ts";
import { writeDemoEpisode } from "./demo_capture.ts";
import { CaptureCoordinator } from "../control/coordinator.ts";
import { buildLineageReport } from "../control/lineage_report.ts";
import { formatLineage } from "./format_lineage.ts";
import { type Io, UsageError } from "./io.ts";

function canWrite(root: string): boolean {
  return Deno.permissions.querySync({ name: "write", path: root }).state ===
    "granted";
}

/**
 * Open for reading: as the writer when possible (so torn tails are repaired
 * and the index catches up), else beside the writer, read-only.
 *
 * @param root Store root.
 * @returns The store.
 */
export function openForRead(root: string): HarnessStore {
  if (canWrite(root)) {
    try {
      return new HarnessStore(root, { role: "cli" });
    } catch (err) {
      if (!(err instanceof StoreLockedError)) throw err;
    }
  }
  return new HarnessStore(root, { readOnly: true });
}

/**
 * Open as the writer, with a clear error when write access is missing.
 *
 * @param root Store root.
 * @returns The store.
 */
export function openForWrite(root: string): HarnessStore {
  if (!canWrite(root)) {
    throw new Deno.errors.NotCapable(
      `No write access to the store ${root}: run with --allow-read=${root} --allow-write=${root}`,
    );
  }
  return new HarnessStore(root, { role: "cli" });
}

/**
 * The URL of the ingest server that owns this store right now, when we may
 * talk to it: read commands then go through it, so they see everything it
 * has acknowledged (its index is flushed before it answers).
 */
function liveServer(root: string): string | null {
  if (!isStoreLocked(root)) return null;
  const url = readLockOwner(root)?.url;
  if (!url) return null;
  try {
    const host = new URL(url).host;
    const state = Deno.permissions.querySync({ name: "net", host }).state;
    return state === "granted" ? url : null;
  } catch {
    return null;
  }
}

async function getJson<T>(url: string): Promise<T> {
  const res = await fetch(url);
  const body = await res.json();
  if (!res.ok) throw new Error(body?.error ?? `HTTP ${res.status} from ${url}`);
  return body as T;
}

function storeExists(root: string): boolean {
  try {
    return Deno.statSync(root).isDirectory;
  } catch {
    return false;
  }
}

/**
 * `capture …` and `store …`.
 *
 * @param group `capture` or `store`.
 * @param command Sub-command.
 * @param id Capture id, where needed.
 * @param root Store root.
 * @param json JSON output.
 * @param io Output.
 * @returns Exit code.
 */
export async function storeCommand(
  group: string,
  command: string | undefined,
  id: string | undefined,
  root: string,
  json: boolean,
  io: Io,
): Promise<number> {
  const print = (data: unknown, text: () => string) =>
    io.out(json ? JSON.stringify(data, null, 2) : text());
  if (group === "capture" && command === "list") {
    if (!storeExists(root)) {
      print([], () => `No store at ${root} yet.`);
      return 0;
    }
    const server = liveServer(root);
    let captures: CaptureRecord[];
    if (server) captures = await getJson(`${server}/captures`);
    else {
      using store = openForRead(root);
      captures = store.listCaptures();
    }
    print(captures, () => formatCaptureList(captures));
    return 0;
  }
  if (group === "capture" && (command === "inspect" || command === "verify")) {
    if (!id) throw new UsageError(`capture ${command} needs a capture id`);
    const server = command === "inspect" ? liveServer(root) : null;
    if (server) {
      const inspection = await getJson<CaptureInspection>(
        `${server}/capture/${encodeURIComponent(id)}/summary`,
      );
      print(inspection, () => formatInspection(id, inspection));
      return inspection.chain.ok ? 0 : 1;
    }
    using store = openForRead(root);
    if (command === "inspect") {
      const inspection = await inspectCapture(store, id);
      print(inspection, () => formatInspection(id, inspection));
      return inspection.chain.ok ? 0 : 1;
    }
    if (!store.hasCapture(id)) {
      throw new Error(
        `Capture "${id}" not found in store ${root}: "capture list" shows the captures there`,
      );
    }
    const report = await store.verifyCapture(id);
    print(report, () => formatChain(id, report));
    return report.ok ? 0 : 1;
  }
  if (group === "store" && command === "rebuild-index") {
    using store = openForWrite(root);
    const t0 = performance.now();
    const r = store.rebuildIndex();
    const ms = Math.round(performance.now() - t0);
    print(
      { ...r, ms },
      () =>
        `Rebuilt the index of ${root}: ${r.captures} captures, ${r.events} events in ${ms} ms`,
    );
    return 0;
  }
  throw new UsageError(
    `unknown command "${[group, command].filter(Boolean).join(" ")}"`,
  );
}

function stamp(d: Date): string {
  return d.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
}

/**
 * `demo`: write a small capture and show it.
 *
 * @param root Store root.
 * @param json JSON output.
 * @param io Output.
 * @returns Exit code.
 */
export async function demo(
  root: string,
  json: boolean,
  io: Io,
): Promise<number> {
  const captureId = `demo_${stamp(new Date())}`;
  let written: number;
  {
    using store = openForWrite(root);
    const sink = store.sink(captureId);
    written = writeDemoEpisode(sink, {
      captureId,
      episodeId: "ep_demo_1",
      source: { host: "harness", adapter: "demo", model: null },
    });
  }
  {
    // Record the task outcome, as a user would with "capture outcome".
    using store = openForWrite(root);
    new CaptureCoordinator(store).markOutcome(captureId, "ep_demo_1", {
      success: true,
      note: "refund issued",
    });
  }
  using store = openForRead(root);
  const inspection = await inspectCapture(store, captureId);
  const lineage = await buildLineageReport(store, captureId);
  const where = {
    store: resolve(root),
    spool: resolve(store.spoolPath(captureId)),
  };
  if (json) {
    io.out(JSON.stringify(
      {
        capture_id: captureId,
        events_written: written,
        ...where,
        inspection,
        lineage,
      },
      null,
      2,
    ));
  } else {
    io.out([
      `Wrote ${written} events to capture ${captureId}`,
      `  store  ${where.store}`,
      `  spool  ${where.spool}`,
      "",
      formatInspection(captureId, inspection),
      "",
      formatLineage(lineage),
    ].join("\n"));
  }
  return inspection.chain.ok ? 0 : 1;
}
