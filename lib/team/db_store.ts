/**
 * Reading the team database like a local store: the same capture list,
 * events, inspection, lineage, chain verification and compile input. A
 * capture is named `STORE:CAPTURE`, or by its capture id alone when only
 * one store has it. The chain check runs over the stored canonical lines
 * and checks every hash, exactly as over a spool.
 *
 * @module
 */
import type { TraceEvent } from "../trace/event.ts";
import { type ChainReport, verifyChain } from "../trace/jsonl.ts";
import type { CaptureRecord } from "../store/index_records.ts";
import { checkSchema, connectDb, type Sql, timely } from "./db.ts";
import { asTarget, type DbTarget } from "./db_target.ts";

/** A capture the database does not hold, or holds for several stores. */
export class TeamCaptureError extends Error {
  /**
   * Create a `TeamCaptureError`.
   *
   * @param message What and what to do.
   */
  constructor(message: string) {
    super(message);
    this.name = "TeamCaptureError";
  }
}

/** The read side of the team database. */
export class DbStore {
  readonly #sql: Sql;
  /** Shown where a store root would be. */
  readonly root: string;
  #captures: (CaptureRecord & { store_id: string })[] = [];

  private constructor(sql: Sql, target: DbTarget) {
    this.#sql = sql;
    this.root = target.display;
  }

  /**
   * Connect, check the schema and load the capture list.
   *
   * @param to The database (a target, or a complete URL).
   * @returns The reader (close it).
   * @throws {TeamDbError} When the database does not answer in time, is not
   *   migrated, or holds a newer schema.
   */
  static async open(to: DbTarget | string): Promise<DbStore> {
    const target = asTarget(to);
    const db = new DbStore(await connectDb(target), target);
    try {
      await checkSchema(db.#sql);
      await db.refresh();
    } catch (err) {
      await db.close();
      throw err;
    }
    return db;
  }

  /** Reload the capture list. */
  async refresh(): Promise<void> {
    const rows = await timely(
      this.#sql,
      this.#sql`SELECT c.store_id, c.capture_id,
      c.head_sequence, c.head_hash, c.event_count,
      (SELECT count(DISTINCT episode_id) FROM events e
        WHERE e.store_id = c.store_id AND e.capture_id = c.capture_id
          AND e.episode_id <> '_capture') AS episodes,
      (SELECT min(timestamp) FROM events e
        WHERE e.store_id = c.store_id AND e.capture_id = c.capture_id) AS first_ts,
      (SELECT max(timestamp) FROM events e
        WHERE e.store_id = c.store_id AND e.capture_id = c.capture_id) AS last_ts,
      (SELECT e.payload->>'label' FROM events e
        WHERE e.store_id = c.store_id AND e.capture_id = c.capture_id
        AND e.kind = 'annotation' AND e.payload->>'type' = 'capture.started'
        ORDER BY e.sequence DESC LIMIT 1) AS label,
      (SELECT min(e.timestamp) FROM events e
        WHERE e.store_id = c.store_id AND e.capture_id = c.capture_id
        AND e.kind = 'annotation' AND e.payload->>'type' = 'capture.started')
        AS started_at,
      (SELECT min(e.timestamp) FROM events e
        WHERE e.store_id = c.store_id AND e.capture_id = c.capture_id
        AND e.kind = 'annotation' AND e.payload->>'type' = 'capture.finished')
        AS finished_at
      FROM captures c WHERE c.event_count > 0
      ORDER BY c.store_id, c.capture_id`,
      "the capture list",
    );
    this.#captures = rows.map((r: Record<string, unknown>) => ({
      store_id: String(r.store_id),
      capture_id: `${r.store_id}:${r.capture_id}`,
      label: (r.label as string | null) ?? null,
      status: r.finished_at ? "finished" : "open",
      event_count: Number(r.event_count),
      episode_count: Number(r.episodes),
      head_sequence: Number(r.head_sequence),
      head_hash: String(r.head_hash),
      indexed_bytes: 0,
      first_timestamp: (r.first_ts as string | null) ?? null,
      last_timestamp: (r.last_ts as string | null) ?? null,
      started_at: (r.started_at as string | null) ?? null,
      finished_at: (r.finished_at as string | null) ?? null,
    }));
  }

  /** Every capture, named `STORE:CAPTURE`. */
  listCaptures(): CaptureRecord[] {
    return this.#captures.map(({ store_id: _s, ...c }) => c);
  }

  /**
   * The full name of a capture (`STORE:CAPTURE`).
   *
   * @param name `STORE:CAPTURE`, or a capture id only one store has.
   * @returns The full name.
   * @throws {TeamCaptureError} When no store, or several, have it.
   */
  resolveName(name: string): string {
    if (this.#captures.some((c) => c.capture_id === name)) return name;
    const hits = this.#captures.filter((c) =>
      c.capture_id.endsWith(`:${name}`)
    );
    if (hits.length === 1) return hits[0].capture_id;
    throw new TeamCaptureError(
      hits.length
        ? `Capture "${name}" is in ${hits.length} stores: name it as ${
          hits.map((h) => h.capture_id).join(" or ")
        }`
        : `Capture "${name}" is not in the team database: "capture list --db" shows what is`,
    );
  }

  /** Whether the database holds a capture. */
  hasCapture(name: string): boolean {
    try {
      this.resolveName(name);
      return true;
    } catch {
      return false;
    }
  }

  /** A capture's record. */
  getCapture(name: string): CaptureRecord | undefined {
    const full = this.hasCapture(name) ? this.resolveName(name) : name;
    const c = this.#captures.find((x) => x.capture_id === full);
    if (!c) return undefined;
    const { store_id: _s, ...rest } = c;
    return rest;
  }

  #split(name: string): [string, string] {
    const full = this.resolveName(name);
    const at = full.indexOf(":");
    return [full.slice(0, at), full.slice(at + 1)];
  }

  async *#lines(
    name: string,
  ): AsyncGenerator<{ line: string; payload: unknown }> {
    const [sid, cid] = this.#split(name);
    let after = 0;
    for (;;) {
      const rows = await timely(
        this.#sql,
        this.#sql`SELECT sequence, line, payload FROM events
        WHERE store_id = ${sid} AND capture_id = ${cid} AND sequence > ${after}
        ORDER BY sequence LIMIT 5000`,
        "a read of events",
      );
      if (!rows.length) return;
      for (const r of rows) yield { line: r.line, payload: r.payload };
      after = Number(rows[rows.length - 1].sequence);
    }
  }

  /**
   * A capture's events in order, payloads with large values resolved.
   *
   * @param name The capture.
   * @param options Only one episode.
   */
  async *readEvents(
    name: string,
    options: { episodeId?: string; resolveBlobs?: boolean } = {},
  ): AsyncGenerator<TraceEvent> {
    const [, cid] = this.#split(name);
    for await (const { line, payload } of this.#lines(name)) {
      const ev = JSON.parse(line) as TraceEvent;
      if (
        options.episodeId !== undefined && ev.episode_id !== options.episodeId
      ) {
        continue;
      }
      // The same events a local store gives, under the name asked for.
      yield {
        ...ev,
        capture_id: cid,
        payload: options.resolveBlobs === false
          ? ev.payload
          : payload as TraceEvent["payload"],
      };
    }
  }

  /**
   * Verify a capture's chain over the stored lines, every hash checked.
   *
   * @param name The capture.
   * @returns The chain report.
   */
  async verifyCapture(name: string): Promise<ChainReport> {
    const [, cid] = this.#split(name);
    const enc = new TextEncoder();
    const lines = this.#lines(name);
    const chunks = (async function* () {
      for await (const { line } of lines) yield enc.encode(line + "\n");
    })();
    return await verifyChain(chunks, { captureId: cid });
  }

  /** Close the connection. */
  async close(): Promise<void> {
    await this.#sql.end({ timeout: 1 }).catch(() => {});
  }
}
