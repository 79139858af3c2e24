/**
 * The team store from the command line: `db migrate --db URL`,
 * `store push --to URL`, and `capture list|inspect|verify|lineage|summary
 * --db URL` (the same output as on a local store).
 *
 * @module
 */
import { HarnessStore } from "../store/store.ts";
import { connectDb, migrate } from "../team/db.ts";
import { pushCapture } from "../team/push.ts";
import { storeId } from "../team/store_id.ts";
import { DbStore } from "../team/db_store.ts";
import { inspectCapture } from "../control/inspect.ts";
import { buildLineageReport } from "../control/lineage_report.ts";
import {
  formatCaptureList,
  formatChain,
  formatInspection,
} from "./format_capture.ts";
import { formatLineage } from "./format_lineage.ts";
import { type Io, UsageError } from "./io.ts";

/**
 * `db migrate --db URL`.
 *
 * @param url The database.
 * @param io Output.
 * @returns Exit code.
 */
export async function dbMigrate(url: string, io: Io): Promise<number> {
  const sql = await connectDb(url, { max: 1 });
  try {
    const v = await migrate(sql);
    io.out(`Team schema ${v} is in place`);
    return 0;
  } finally {
    await sql.end({ timeout: 2 });
  }
}

/**
 * `store push --to URL`: ship every capture's events the database lacks.
 *
 * @param root Store root (opened as the writer: it keeps its id).
 * @param url The database.
 * @param json JSON output.
 * @param io Output.
 * @returns 0, or 1 when the database refused a capture (a gap or a fork).
 */
export async function storePush(
  root: string,
  url: string,
  json: boolean,
  io: Io,
): Promise<number> {
  using store = new HarnessStore(root, { role: "cli" });
  const sid = storeId(root);
  const sql = await connectDb(url, { max: 1 });
  const report: Record<string, unknown>[] = [];
  let refused = 0;
  try {
    await migrate(sql);
    for (const cap of store.listCaptures()) {
      let after = 0, shipped = 0, skipped = 0;
      for (;;) {
        const r = await pushCapture(sql, store, sid, cap.capture_id, after);
        shipped += r.shipped;
        skipped += r.skipped;
        if (r.refused) {
          refused++;
          report.push({ capture_id: cap.capture_id, refused: r.refused });
          break;
        }
        if (r.head <= after || r.head >= cap.head_sequence) {
          report.push({
            capture_id: cap.capture_id,
            shipped,
            skipped,
            head: r.head,
          });
          break;
        }
        after = r.head;
      }
    }
  } finally {
    await sql.end({ timeout: 2 });
  }
  io.out(
    json ? JSON.stringify({ store_id: sid, captures: report }, null, 2) : [
      `store ${sid} → ${new URL(url).host}`,
      ...report.map((r) =>
        r.refused
          ? `  ${r.capture_id}: REFUSED ${
            (r.refused as { message: string }).message
          }`
          : `  ${r.capture_id}: ${r.shipped} shipped, ${r.skipped} already there, head ${r.head}`
      ),
    ].join("\n"),
  );
  return refused ? 1 : 0;
}

/**
 * `capture list|inspect|verify|lineage|summary --db URL`.
 *
 * @param command The sub-command.
 * @param id Capture (`STORE:CAPTURE` or a capture id one store has).
 * @param url The database.
 * @param json JSON output.
 * @param io Output.
 * @returns Exit code.
 */
export async function captureFromDb(
  command: string,
  id: string | undefined,
  url: string,
  json: boolean,
  io: Io,
): Promise<number> {
  const db = await DbStore.open(url);
  const print = (data: unknown, text: () => string) =>
    io.out(json ? JSON.stringify(data, null, 2) : text());
  try {
    if (command === "list") {
      const caps = db.listCaptures();
      print(caps, () => formatCaptureList(caps));
      return 0;
    }
    if (!id) throw new UsageError(`capture ${command} needs a capture id`);
    const name = db.resolveName(id);
    switch (command) {
      case "verify": {
        const r = await db.verifyCapture(name);
        print(r, () => formatChain(name, r));
        return r.ok ? 0 : 1;
      }
      case "inspect":
      case "summary": {
        const i = await inspectCapture(db, name);
        print(i, () => formatInspection(name, i));
        return i.chain.ok ? 0 : 1;
      }
      case "lineage": {
        const r = await buildLineageReport(db, name);
        print(r, () => formatLineage(r));
        return r.chain.ok ? 0 : 1;
      }
      default:
        throw new UsageError(
          `capture ${command} does not take --db (list, inspect, verify, lineage, summary do)`,
        );
    }
  } finally {
    await db.close();
  }
}
