/**
 * Shipping a capture's sealed events to the team database, checked on
 * arrival: in one transaction the capture's row is locked, events the
 * database already holds are skipped when their hashes agree (so a push
 * is idempotent on `(store_id, capture_id, sequence)`), and the first new
 * event must follow the stored head — sequence head + 1 and
 * `prev_event_hash` = head hash — with every line's own hash and link
 * checked. A gap or a fork is refused, recorded in `refusals`, and nothing
 * of the batch is merged.
 *
 * @module
 */
import type { HarnessStore } from "../store/store.ts";
import type { TraceEvent } from "../trace/event.ts";
import { GENESIS_HASH } from "../trace/hash.ts";
import { checkLine } from "../trace/jsonl.ts";
import { splitLines } from "../trace/lines.ts";
import { readChunks } from "../store/file_chunks.ts";
import { dbError, type Sql, timely } from "./db.ts";

/** What one push did. */
export interface PushResult {
  /** Events inserted. */
  shipped: number;
  /** Events already there (same hash). */
  skipped: number;
  /** The database's head for the capture after the push. */
  head: number;
  /** Why the batch was refused, or null. */
  refused: { kind: "gap" | "fork" | "broken"; message: string } | null;
}

/** Options of {@linkcode pushCapture}. */
export interface PushOptions {
  /** The local store (the evidence). */
  store: HarnessStore;
  /** The store's id. */
  storeId: string;
  /** The capture. */
  captureId: string;
  /**
   * Last sequence known shipped (a cursor; the database's own head decides
   * what is new).
   */
  after: number;
  /**
   * Most events per push.
   * @default 5000
   */
  limit?: number;
}

/** Events of a capture after a sequence, read from its spool. */
async function eventsAfter(
  store: HarnessStore,
  from: { captureId: string; after: number; limit: number },
): Promise<{ line: string; ev: TraceEvent }[]> {
  const { captureId, after, limit } = from;
  const first = store.index.offsetAfter(captureId, after);
  if (!first) return [];
  const out: { line: string; ev: TraceEvent }[] = [];
  const decoder = new TextDecoder();
  for await (
    const l of splitLines(
      readChunks(store.spoolPath(captureId), first.byte_offset),
    )
  ) {
    if (!l.terminated) break;
    const line = decoder.decode(l.bytes);
    out.push({ line, ev: JSON.parse(line) as TraceEvent });
    if (out.length >= limit) break;
  }
  return out;
}

/** A spool line and its event. */
type Line = { line: string; ev: TraceEvent };

/** One push inside its transaction: the connection, the capture, the result. */
interface Push {
  /** The reserved connection. */
  tx: Sql;
  /** Run a statement under the client's deadline. */
  q: (query: PromiseLike<unknown>) => Promise<Sql>;
  /** The store's id. */
  storeId: string;
  /** The capture. */
  captureId: string;
  /** What happened so far. */
  result: PushResult;
}

/** Record a refusal (the batch is not merged). */
async function refuse(
  p: Push,
  refusal: {
    kind: "gap" | "fork" | "broken";
    sequence: number;
    message: string;
  },
): Promise<void> {
  const { kind, sequence, message } = refusal;
  p.result.refused = { kind, message };
  await p.q(
    p.tx`INSERT INTO refusals (store_id, capture_id, sequence, kind, message)
    VALUES (${p.storeId}, ${p.captureId}, ${sequence}, ${kind}, ${message})`,
  );
}

/**
 * Events at or below the head must be the ones the database holds (same
 * hash): those are skipped; a different one is a fork.
 *
 * @returns False when the push was refused.
 */
async function skipShipped(p: Push, old: Line[]): Promise<boolean> {
  if (!old.length) return true;
  const { tx, storeId, captureId } = p;
  const seqs = old.map((b) => b.ev.sequence);
  const stored = new Map<number, string>(
    (await p.q(tx`SELECT sequence, event_hash FROM events
      WHERE store_id = ${storeId} AND capture_id = ${captureId}
      AND sequence = ANY(${`{${seqs.join(",")}}`}::bigint[])`)).map((
      r: { sequence: string; event_hash: string },
    ) => [Number(r.sequence), r.event_hash]),
  );
  for (const b of old) {
    if (stored.get(b.ev.sequence) !== b.ev.event_hash) {
      await refuse(p, {
        kind: "fork",
        sequence: b.ev.sequence,
        message:
          `Sequence ${b.ev.sequence} differs from the one the database holds: the chains forked`,
      });
      return false;
    }
    p.result.skipped++;
  }
  return true;
}

/**
 * The rows of the new events, each line checked to follow the one before
 * (from the database's head), or null when one does not (refused).
 */
async function chainedRows(
  p: Push,
  batch: {
    fresh: Line[];
    head: { sequence: number; hash: string };
    store: HarnessStore;
  },
): Promise<
  { rows: Record<string, unknown>[]; head: number; hash: string } | null
> {
  const { fresh, store } = batch;
  let head = batch.head.sequence;
  let hash = batch.head.hash;
  if (fresh[0].ev.sequence !== head + 1) {
    await refuse(p, {
      kind: "gap",
      sequence: fresh[0].ev.sequence,
      message: `Sequence ${
        fresh[0].ev.sequence
      } does not follow the database's head ${head}: events are missing`,
    });
    return null;
  }
  const rows = [];
  for (const b of fresh) {
    const checked = checkLine(b.line, {
      sequence: head + 1,
      prev: hash,
      captureId: p.captureId,
    });
    if (typeof checked !== "string") {
      await refuse(p, {
        kind: checked.kind === "link" ? "fork" : "broken",
        sequence: head + 1,
        message: checked.message,
      });
      return null;
    }
    head++;
    hash = checked;
    const ev = store.resolve(b.ev);
    const tool = (ev.payload as { tool?: { host_name?: unknown } }).tool
      ?.host_name;
    rows.push({
      store_id: p.storeId,
      capture_id: p.captureId,
      sequence: ev.sequence,
      event_id: ev.event_id,
      episode_id: ev.episode_id,
      kind: ev.kind,
      timestamp: ev.timestamp,
      tool: typeof tool === "string" ? tool : null,
      prev_event_hash: ev.prev_event_hash,
      event_hash: ev.event_hash,
      line: b.line,
      payload: p.tx.json(ev.payload),
    });
  }
  return { rows, head, hash };
}

/** Lock the capture's row, skip what is there, insert what follows. */
async function pushBatch(
  p: Push,
  batch: { lines: Line[]; store: HarnessStore },
): Promise<void> {
  const { tx, q, storeId, captureId, result } = p;
  await q(tx`INSERT INTO stores (store_id) VALUES (${storeId})
    ON CONFLICT (store_id) DO NOTHING`);
  await q(tx`INSERT INTO captures VALUES
    (${storeId}, ${captureId}, 0, ${GENESIS_HASH}, 0, now())
    ON CONFLICT (store_id, capture_id) DO NOTHING`);
  const [cap] = await q(tx`SELECT head_sequence, head_hash, event_count
    FROM captures WHERE store_id = ${storeId} AND capture_id = ${captureId}
    FOR UPDATE`);
  const head = Number(cap.head_sequence);
  result.head = head;
  const old = batch.lines.filter((b) => b.ev.sequence <= head);
  if (!await skipShipped(p, old)) return;
  const fresh = batch.lines.filter((b) => b.ev.sequence > head);
  if (!fresh.length) return;
  const chained = await chainedRows(p, {
    fresh,
    head: { sequence: head, hash: String(cap.head_hash) },
    store: batch.store,
  });
  if (!chained) return;
  const { rows } = chained;
  for (let i = 0; i < rows.length; i += 1000) {
    await q(tx`INSERT INTO events ${tx(rows.slice(i, i + 1000))}
      ON CONFLICT (store_id, capture_id, sequence) DO NOTHING`);
  }
  await q(tx`UPDATE captures SET head_sequence = ${chained.head},
    head_hash = ${chained.hash}, event_count = event_count + ${rows.length},
    updated_at = now()
    WHERE store_id = ${storeId} AND capture_id = ${captureId}`);
  result.shipped = rows.length;
  result.head = chained.head;
}

/**
 * Push the events of one capture that follow `after`, in one transaction
 * (see the module doc).
 *
 * @param sql The database client.
 * @param options The store, its id, the capture, the cursor and the batch size.
 * @returns What happened.
 * @throws {TeamDbError} When the database fails or is late.
 */
export async function pushCapture(
  sql: Sql,
  options: PushOptions,
): Promise<PushResult> {
  const { store, storeId, captureId, after } = options;
  const lines = await eventsAfter(store, {
    captureId,
    after,
    limit: options.limit ?? 5000,
  });
  const result: PushResult = {
    shipped: 0,
    skipped: 0,
    head: after,
    refused: null,
  };
  // One reserved connection, each statement under the client's deadline
  // (a BEGIN that never answers is caught like any other statement).
  const tx: Sql = await timely(sql, sql.reserve(), "a connection");
  const q = (query: PromiseLike<unknown>) => timely(sql, query, "the push");
  try {
    await q(tx`BEGIN`);
    await pushBatch({ tx, q, storeId, captureId, result }, { lines, store });
    if (result.refused && Number(result.head) === 0) {
      // A refused first push leaves no empty capture behind (it would make
      // the capture's short name ambiguous); the refusal stays recorded.
      await q(tx`DELETE FROM captures WHERE store_id = ${storeId}
        AND capture_id = ${captureId} AND event_count = 0`);
    }
    await q(tx`COMMIT`);
  } catch (err) {
    await q(tx`ROLLBACK`).catch(() => {});
    throw dbError(err);
  } finally {
    tx.release();
  }
  return result;
}
