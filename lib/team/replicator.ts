/**
 * Replication behind the acknowledgement: the ingest server keeps taking
 * events locally while a background loop ships them to the team database
 * from a durable cursor per capture (`<root>/replication.json`). A
 * database that is down, slow or restarted only delays shipping; the loop
 * backs off and resumes where it stopped. Pushes are idempotent, so a
 * cursor that lags the database (a crash between commit and cursor write)
 * re-sends nothing twice; a cursor ahead of it (a reset database) falls
 * back to the database's head.
 *
 * @module
 */
import { join } from "node:path";
import type { HarnessStore } from "../store/store.ts";
import { connectDb, migrate, type Sql } from "./db.ts";
import { asTarget, type DbTarget, redactPassword } from "./db_target.ts";
import { pushCapture } from "./push.ts";
import { storeId } from "./store_id.ts";

/** What `/health` and `status` show of replication. */
export interface ReplicationStatus {
  /** Events acknowledged locally and not yet in the database. */
  lag_events: number;
  /** Events shipped since start. */
  shipped: number;
  /** Last error (null when the last push went through). */
  last_error: string | null;
  /** Gaps and forks the database refused. */
  refused: number;
  /** When the last push went through (ISO), or null. */
  last_success: string | null;
  /**
   * Events wait and no round has gone through for `stallAfterMs`: the
   * database is down or does not answer (`/health` then says `ok: false`).
   */
  stalled: boolean;
  /** The database, without its password. */
  database: string;
}

/** Options of a {@linkcode Replicator}. */
export interface ReplicatorOptions {
  /** Milliseconds between rounds when caught up. @default 200 */
  intervalMs?: number;
  /** Most events per push. @default 5000 */
  batch?: number;
  /** Milliseconds without a round going through, events waiting, before replication counts as stalled. @default 30000 */
  stallAfterMs?: number;
  /** Milliseconds a statement may take. @default 8000 */
  statementTimeoutMs?: number;
}

/** Ships a store's events to a team database in the background. */
export class Replicator {
  readonly #store: HarnessStore;
  readonly #target: DbTarget;
  readonly #interval: number;
  readonly #stallAfter: number;
  readonly #statementTimeout: number | undefined;
  #lastOk = Date.now();
  readonly #batch: number;
  readonly #cursorPath: string;
  #cursors: Record<string, number>;
  #sql: Sql | null = null;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #running: Promise<void> | null = null;
  #stopped = false;
  #backoff = 0;
  readonly #status: ReplicationStatus = {
    lag_events: 0,
    shipped: 0,
    last_error: null,
    refused: 0,
    last_success: null,
    stalled: false,
    database: "",
  };
  /** The store's id in the team database. */
  readonly storeId: string;

  /**
   * Create a `Replicator`.
   *
   * @param store The local store (writable: it keeps the cursor).
   * @param to The team database (a target, or a complete URL).
   * @param options Interval, batch size, stall threshold, time-out.
   */
  constructor(
    store: HarnessStore,
    to: DbTarget | string,
    options: ReplicatorOptions = {},
  ) {
    this.#store = store;
    this.#target = asTarget(to);
    this.#status.database = this.#target.display;
    this.#interval = options.intervalMs ?? 200;
    this.#stallAfter = options.stallAfterMs ?? 30_000;
    this.#statementTimeout = options.statementTimeoutMs;
    this.#batch = options.batch ?? 5000;
    this.storeId = storeId(store.root);
    this.#cursorPath = join(store.root, "replication.json");
    this.#cursors = readCursors(this.#cursorPath, this.#target);
  }

  /** Replication as it stands. */
  get status(): ReplicationStatus {
    const lag = this.#lag();
    if (lag === 0) this.#lastOk = Date.now();
    return {
      ...this.#status,
      lag_events: lag,
      stalled: lag > 0 && Date.now() - this.#lastOk > this.#stallAfter,
    };
  }

  #lag(): number {
    let lag = 0;
    for (const c of this.#store.listCaptures()) {
      lag += Math.max(0, c.head_sequence - (this.#cursors[c.capture_id] ?? 0));
    }
    return lag;
  }

  /** Start the loop. */
  start(): void {
    globalThis.addEventListener("error", this.#contain);
    this.#schedule(0);
  }

  /**
   * npm:postgres 3.4.9 can throw from a timer after the database dropped
   * the connection (a write scheduled on a socket it already set to null).
   * That error belongs to this replicator's connection: it must not stop
   * the ingest server. Note it and reconnect on the next round.
   */
  readonly #contain = (e: ErrorEvent): void => {
    const stack = String((e.error as Error | undefined)?.stack ?? "");
    if (!/[\\/]postgres[\\/]/.test(stack)) return;
    e.preventDefault();
    this.#status.last_error = this.#redact(
      `database connection failed: ${e.message}`,
    );
    const sql = this.#sql;
    this.#sql = null;
    sql?.end({ timeout: 0 }).catch(() => {});
  };

  #schedule(ms: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#running = this.round().finally(() => this.#running = null);
    }, ms);
  }

  /**
   * One round: ship what each capture has beyond its cursor.
   *
   * @returns When the round is over (the next is scheduled).
   */
  async round(): Promise<void> {
    let more = false;
    let refusedNow = false;
    try {
      if (!this.#sql) {
        this.#sql = await connectDb(this.#target, {
          max: 2,
          statementTimeoutMs: this.#statementTimeout,
        });
        await migrate(this.#sql);
      }
      this.#store.flush();
      for (const cap of this.#store.listCaptures()) {
        const id = cap.capture_id;
        const cursor = this.#cursors[id] ?? 0;
        if (cap.head_sequence <= cursor) continue;
        const r = await pushCapture(this.#sql, {
          store: this.#store,
          storeId: this.storeId,
          captureId: id,
          after: cursor,
          limit: this.#batch,
        });
        this.#status.shipped += r.shipped;
        if (r.refused) {
          refusedNow = true;
          this.#status.refused++;
          this.#status.last_error = this.#redact(`${id}: ${r.refused.message}`);
          if (r.refused.kind !== "gap") continue; // a fork waits for people
        }
        // The database's head is the truth (a gap: it is behind the cursor).
        this.#cursors[id] = r.head;
        if (r.head < cap.head_sequence) more = true;
      }
      if (this.#stopped) return;
      writeCursors(this.#cursorPath, this.#target, this.#cursors);
      this.#status.last_success = new Date().toISOString();
      this.#lastOk = Date.now();
      if (!refusedNow) this.#status.last_error = null;
      this.#backoff = 0;
    } catch (err) {
      this.#status.last_error = this.#redact((err as Error).message);
      const sql = this.#sql;
      this.#sql = null;
      await sql?.end({ timeout: 0 }).catch(() => {});
      this.#backoff = Math.min(10_000, Math.max(250, this.#backoff * 2));
    }
    this.#schedule(this.#backoff || (more ? 0 : this.#interval));
  }

  #redact(text: string): string {
    return redactPassword(text, this.#target.password);
  }

  /**
   * Stop the loop and close the connection, within about `graceMs` whatever
   * the database does: a round in flight gets that long to finish, then its
   * connection is cut (the cursor stays where the last committed round put
   * it; pushes are idempotent, so nothing is lost or sent twice).
   *
   * @param graceMs Milliseconds a round in flight may still take. @default 1000
   */
  async stop(graceMs = 1000): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const grace = new Promise<void>((r) => timer = setTimeout(r, graceMs));
    await Promise.race([this.#running ?? Promise.resolve(), grace]);
    const sql = this.#sql;
    this.#sql = null;
    // Cut at once: a database that does not answer must not hold the stop.
    await sql?.end({ timeout: 0 }).catch(() => {});
    await Promise.race([this.#running ?? Promise.resolve(), grace]);
    clearTimeout(timer);
    globalThis.removeEventListener("error", this.#contain);
  }
}

function readCursors(
  path: string,
  target: DbTarget,
): Record<string, number> {
  try {
    const all = JSON.parse(Deno.readTextFileSync(path));
    return { ...(all[keyOf(target)] ?? {}) };
  } catch {
    return {};
  }
}

function writeCursors(
  path: string,
  target: DbTarget,
  cursors: Record<string, number>,
): void {
  let all: Record<string, unknown> = {};
  try {
    all = JSON.parse(Deno.readTextFileSync(path));
  } catch { /* first write */ }
  all[keyOf(target)] = cursors;
  const tmp = `${path}.tmp`;
  Deno.writeTextFileSync(tmp, JSON.stringify(all) + "\n", { mode: 0o600 });
  Deno.renameSync(tmp, path);
}

/** The database a cursor belongs to, without its password. */
function keyOf(t: DbTarget): string {
  return `${t.host}:${t.port}/${t.database}`;
}
