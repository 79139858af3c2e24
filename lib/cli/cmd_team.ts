/**
 * The team store from the command line: `db migrate --db URL|env`,
 * `store push --to URL|env`, and `capture list|inspect|verify|lineage|summary
 * --db URL` (the same output as on a local store).
 *
 * @module
 */
import { HarnessStore } from "../store/store.ts";
import { connectDb, migrate } from "../team/db.ts";
import { resolveDbTarget } from "../team/db_target.ts";
import { pushCapture } from "../team/push.ts";
import { StoreLockedError } from "../store/lock.ts";
import { storeId } from "../team/store_id.ts";
import { DbStore } from "../team/db_store.ts";
import { inspectCapture } from "../store/inspect.ts";
import { buildLineageReport } from "../control/lineage_report.ts";
import {
  formatCaptureList,
  formatChain,
  formatInspection,
} from "./format_capture.ts";
import { formatLineage } from "./format_lineage.ts";
import { type Io, UsageError } from "./io.ts";
import { dbTarget } from "./env.ts";

/**
 * `db migrate --db URL|env`.
 *
 * @param o `spec`: the database (`env`: `HARNESS_DB_URL`; a URL may leave
 *   parts to the `PG*` variables); `json`: one JSON object out.
 * @param io Output.
 * @returns Exit code.
 */
export async function dbMigrate(
  o: { spec: string; json: boolean },
  io: Io,
): Promise<number> {
  const target = await dbTarget(o.spec, io.err);
  const sql = await connectDb(target, { max: 1 });
  try {
    const v = await migrate(sql);
    io.out(
      o.json
        ? JSON.stringify({ schema: v, database: target.display })
        : `Team schema ${v} is in place in ${target.display}`,
    );
    return 0;
  } finally {
    await sql.end({ timeout: 1 }).catch(() => {});
  }
}

/**
 * `store push --to URL`: ship every capture's events the database lacks.
 *
 * @param o `root`: the store root (opened as the writer: it keeps its
 *   id); `spec`: the database (`env`, or a URL); `json`: JSON output.
 * @param io Output.
 * @returns 0, or 1 when the database refused a capture (a gap or a fork).
 */
export async function storePush(
  o: { root: string; spec: string; json: boolean },
  io: Io,
): Promise<number> {
  const { root, spec, json } = o;
  const target = await dbTarget(spec, io.err);
  using store = pushingStore(root, spec);
  const sid = storeId(root);
  const sql = await connectDb(target, { max: 1 });
  const report: Record<string, unknown>[] = [];
  let refused = 0;
  try {
    await migrate(sql);
    for (const cap of store.listCaptures()) {
      let after = 0, shipped = 0;
      for (;;) {
        const r = await pushCapture(sql, {
          store,
          storeId: sid,
          captureId: cap.capture_id,
          after,
        });
        shipped += r.shipped;
        if (r.refused) {
          refused++;
          report.push({ capture_id: cap.capture_id, refused: r.refused });
          break;
        }
        if (r.head <= after || r.head >= cap.head_sequence) {
          // Already there: everything up to the head this push did not ship
          // (the first batch alone is only the first 5000 of them).
          report.push({
            capture_id: cap.capture_id,
            shipped,
            skipped: Math.min(r.head, cap.head_sequence) - shipped,
            head: r.head,
          });
          break;
        }
        after = r.head;
      }
    }
  } finally {
    await sql.end({ timeout: 1 }).catch(() => {});
  }
  io.out(
    json ? JSON.stringify({ store_id: sid, captures: report }, null, 2) : [
      `store ${sid} → ${target.display}`,
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
 * @param o `command`: the sub-command; `id`: the capture (`STORE:CAPTURE`
 *   or a capture id one store has); `spec`: the database (`env`, or a
 *   URL); `json`: JSON output.
 * @param io Output.
 * @returns Exit code.
 */
export async function captureFromDb(
  o: { command: string; id: string | undefined; spec: string; json: boolean },
  io: Io,
): Promise<number> {
  const { command, id, spec, json } = o;
  const db = await DbStore.open(await dbTarget(spec, io.err));
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

/**
 * `db net`: what the deno tasks add to `--allow-net` — `,host:port` of the
 * database `HARNESS_DB_URL` (or `PGHOST`/`PGPORT`) names, or nothing — so a
 * task may reach the team database and no other host.
 *
 * @param env The environment (as far as it may be read).
 * @returns `,host:port` or "".
 */
export function dbNetGrant(env: (name: string) => string | undefined): string {
  const url = env("HARNESS_DB_URL");
  const host = env("PGHOST");
  if (!url && !host) return "";
  try {
    const t = resolveDbTarget(url || "postgres://", {
      env,
      readFile: () => null,
    });
    if (!/^[A-Za-z0-9.\-]+$/.test(t.host)) return "";
    return `,${t.host}:${t.port}`;
  } catch {
    return "";
  }
}

/**
 * The store, opened for `store push` (as its writer: the push keeps the
 * store's id); a running server holds it, and what to do then is about
 * pushing: stop the server for a push by hand, or let the server ship as
 * it records (`serve --replicate`).
 */
function pushingStore(root: string, spec: string): HarnessStore {
  try {
    return new HarnessStore(root, { role: "cli" });
  } catch (err) {
    if (!(err instanceof StoreLockedError)) throw err;
    const who = err.owner
      ? `process ${err.owner.pid} (${err.owner.role}${
        err.owner.url ? ` at ${err.owner.url}` : ""
      })`
      : "another process";
    throw new Error(
      `store push needs the store ${root} to itself, and ${who} holds it: stop the server first (deno task ingest stop), push, then start it again; or let the server ship every event as it records: start it with --replicate ${
        spec === "env" ? "env" : "postgres://…"
      }`,
      { cause: err },
    );
  }
}
