/**
 * {@linkcode HarnessStore}: one root directory holding
 * `harness.db` (the rebuildable SQLite index), `captures/<id>.jsonl`
 * (append-only spools, the evidence) and `blobs/sha256/<hex>`.
 *
 * The class is the store's one door; its mechanism is in the `_*.ts`
 * modules beside it (opening, sinks, index feed, catch-up, reading,
 * verifying, packages).
 *
 * @module
 */
import type { TraceEvent } from "../trace/event.ts";
import type { ChainReport } from "../trace/jsonl.ts";
import { validateId } from "../trace/ids.ts";
import { validateEvent } from "../trace/validate.ts";
import { exists } from "./fs_sync.ts";
import { BlobStore } from "./blobs.ts";
import { DEFAULT_BLOB_THRESHOLD, resolveBlobRefs } from "./blob_refs.ts";
import type { SqliteIndex } from "./index_db.ts";
import type { CaptureRecord, EpisodeRecord } from "./index_records.ts";
import type { StoreLock } from "./lock.ts";
import type { JsonlTraceSink } from "./sink.ts";
import type {
  HarnessStoreOptions,
  HeadAnchor,
  OpenFinding,
  ReadEventsOptions,
} from "./store_types.ts";
import { openRoot } from "./_open_store.ts";
import {
  isSpoolFile,
  removeEmptySpool,
  spoolIds,
  spoolPathIn,
} from "./_spool_files.ts";
import { assertNoCaseClash, SinkTable } from "./_sink_table.ts";
import { IndexFeed } from "./_index_feed.ts";
import { catchUpCapture, catchUpIndex } from "./_catch_up.ts";
import { tornTailFinding } from "./_findings.ts";
import { insertPackage, selectPackages } from "./_packages.ts";
import { readSpoolEvents } from "./_read_events.ts";
import { headAnchors, verifyAnchored } from "./_verify_capture.ts";
import { type StoreHealth, WriteHealth } from "./write_health.ts";
import { writeHooks } from "./_write_hooks.ts";

/** The store. Construct one per root and process; close it when done. */
export class HarnessStore {
  /** The root directory. */
  readonly root: string;
  /** Whether it was opened read-only. */
  readonly readOnly: boolean;
  /** Held: appends arm no sync or flush timers (see `hold`). */
  readonly #hold = { held: false };
  /**
   * The blob store (mechanism, for the harness's own use).
   * @internal
   */
  readonly blobs: BlobStore;
  /** Repairs and problems found on open. */
  readonly findings: OpenFinding[] = [];
  readonly #index: SqliteIndex | null;
  readonly #lock: StoreLock | null;
  readonly #sinks: SinkTable;
  /** Whether the sinks redact payloads before sealing. */
  readonly redacts: boolean;
  readonly #feed: IndexFeed;
  readonly #health = new WriteHealth();
  #closed = false;

  /**
   * Open (creating if needed) a store. A writer takes the root's lock,
   * repairs torn spool tails and brings the index up to date with the
   * spools.
   *
   * @param root The root directory.
   * @param options Mode and tuning.
   * @throws {StoreLockedError} When another writer holds the root.
   */
  constructor(root: string, options: HarnessStoreOptions = {}) {
    this.root = root;
    this.readOnly = options.readOnly ?? false;
    this.blobs = new BlobStore(root);
    this.redacts = options.redaction !== false;
    this.#sinks = new SinkTable({
      maxOpen: options.maxOpenSpools ?? 128,
      syncIntervalMs: options.syncIntervalMs ?? 100,
      hold: this.#hold,
      blobThreshold: options.blobThreshold ?? DEFAULT_BLOB_THRESHOLD,
      ...writeHooks({
        root,
        blobs: this.blobs,
        health: this.#health,
        appended: (ev, offset, length) =>
          this.#feed.appended(ev, offset, length),
        ranAppended: (last) => {
          catchUpCapture(this.index, {
            captureId: last.capture_id,
            path: this.spoolPath(last.capture_id),
            findings: this.findings,
          });
          this.#feed.ranAppended(last);
        },
        redaction: options.redaction,
      }),
    });
    const opened = openRoot(root, options);
    this.#lock = opened.lock;
    this.#index = opened.index;
    this.#index?.watchFlushes((err) =>
      err === null
        ? this.#health.succeeded("index")
        : this.#health.failed("index", err)
    );
    if (this.#lock) {
      // The one writer: blob writes a killed process left half done.
      const swept = this.blobs.sweepTemporary();
      if (swept) {
        this.findings.push({
          capture_id: "",
          kind: "blob_temporaries_removed",
          message:
            `Removed ${swept} unfinished blob write file(s) (*.tmp-*) left by an earlier process`,
        });
      }
    }
    this.#feed = new IndexFeed(root, this.#index, {
      readOnly: this.readOnly,
      flushMs: options.indexFlushMs ?? 50,
      flushRows: options.indexFlushRows ?? 5000,
      hold: this.#hold,
    });
    if (opened.catchUp === "memory") {
      this.#catchUp(false);
      this.findings.push(opened.finding!);
    } else if (opened.catchUp === "repair") {
      if (opened.finding) this.findings.push(opened.finding);
      try {
        this.#catchUp();
      } catch (err) {
        this.#lock?.release();
        throw err;
      }
    }
  }

  /**
   * The lock, for a server that learns its URL after opening.
   * @internal
   */
  get lock(): StoreLock | null {
    return this.#lock;
  }

  /**
   * Path of a capture's spool.
   *
   * @param captureId Capture id.
   * @returns `<root>/captures/<id>.jsonl`.
   * @throws {InvalidIdError} For a bad id.
   */
  spoolPath(captureId: string): string {
    return spoolPathIn(this.root, captureId);
  }

  /**
   * Ids of every capture with a spool, sorted.
   *
   * @returns Capture ids.
   */
  captureIds(): string[] {
    return spoolIds(this.root);
  }

  /**
   * Whether a capture has a spool.
   *
   * @param captureId Capture id.
   * @returns True when it exists.
   */
  hasCapture(captureId: string): boolean {
    return isSpoolFile(this.spoolPath(captureId));
  }

  /**
   * The sink of a capture (created on first use; one per capture and store).
   *
   * @param captureId Capture id.
   * @returns Its sink.
   * @throws {InvalidIdError} For a bad id.
   * @throws {SpoolError} When the spool's last line is damaged.
   */
  sink(captureId: string): JsonlTraceSink {
    this.#assertWritable();
    const existing = this.#sinks.get(captureId);
    if (existing) return existing;
    const path = this.spoolPath(captureId);
    const created = !exists(path);
    if (created) assertNoCaseClash(captureId, this.captureIds());
    // Asked before the spool opens: a failure here (the index cannot flush
    // on a full disk) must leave no open file and no new spool behind.
    const finished = this.getCapture(captureId)?.status === "finished";
    const { writer, info } = this.#sinks.openSpool(path);
    const repaired = tornTailFinding(captureId, info);
    if (repaired) this.findings.push(repaired);
    return this.#sinks.create(captureId, path, {
      spool: writer,
      head: info.head,
      finished,
      // A new capture whose first write fails leaves no empty spool.
      ...(created ? { onAbandoned: () => removeEmptySpool(path) } : {}),
    });
  }

  /**
   * Be told of every event appended from now on, right after it is written
   * and indexed (live export). The listener must not block; what it throws
   * is ignored, so an observer never breaks an append.
   *
   * @param listener Called with each appended event.
   * @returns A function that stops the observation.
   */
  observe(listener: (ev: TraceEvent) => void): () => void {
    return this.#feed.observe(listener);
  }

  /** Spool files open now. */
  get openSpools(): number {
    return this.#sinks.openCount;
  }

  /**
   * Record one already-formed event: validate its envelope, then seal it
   * into its capture's chain (any sequence and hashes it carries are
   * replaced: the store decides order).
   *
   * @param event An event object (parsed JSON is fine).
   * @returns The sealed event as stored.
   * @throws {EventShapeError} When the envelope is wrong.
   */
  ingest(event: unknown): TraceEvent {
    const ev = validateEvent(event);
    return this.sink(ev.capture_id).emit(ev);
  }

  /**
   * Whether the store's writes succeed now: each part (spool, blobs,
   * index) whose last write failed, with the reason, until a write of it
   * succeeds again. `/health` reports it.
   *
   * @returns The store's health.
   */
  health(): StoreHealth {
    return this.#health.report();
  }

  /** Why the last background index flush failed; null once one succeeds. */
  get indexFlushError(): string | null {
    return this.#feed.flushError;
  }

  /** Write buffered index rows now. */
  flush(): void {
    this.#feed.flush();
  }

  /** Sync every open spool and flush the index. */
  sync(): void {
    for (const sink of this.#sinks.all()) sink.sync();
    this.flush();
  }

  /**
   * Promise to {@linkcode HarnessStore.settle} soon: until then, appends arm
   * none of the timers that would sync the spools and flush the index (a
   * timer cancelled later still wakes the process when it was due).
   */
  hold(): void {
    this.#hold.held = true;
  }

  /**
   * Make everything written durable now, on this thread: sync every open
   * spool, flush the index and sync its head receipts; ends a
   * {@linkcode HarnessStore.hold}. For a quiet moment (one exchange recorded
   * after a pause): the timers and background syncs that group this work
   * under load would each wake the process again.
   *
   * @throws {Error} The first `fdatasync` error of a spool; that spool's
   *   sync is then tried again in the background.
   */
  settle(): void {
    this.#hold.held = false;
    let failed: unknown = null;
    for (const sink of this.#sinks.all()) {
      try {
        sink.sync();
      } catch (err) {
        failed ??= err;
        sink.syncSoon();
      }
    }
    this.#feed.settle();
    if (failed !== null) throw failed;
  }

  /**
   * All captures known to the index.
   *
   * @returns Capture records by id.
   */
  listCaptures(): CaptureRecord[] {
    return this.index.listCaptures();
  }

  /**
   * One capture.
   *
   * @param captureId Capture id.
   * @returns Its record, or undefined.
   */
  getCapture(captureId: string): CaptureRecord | undefined {
    return this.index.getCapture(validateId("capture", captureId));
  }

  /**
   * Episodes of a capture.
   *
   * @param captureId Capture id.
   * @returns Episode records in order of first event.
   */
  listEpisodes(captureId: string): EpisodeRecord[] {
    return this.index.listEpisodes(validateId("capture", captureId));
  }

  /**
   * Event counts by kind.
   *
   * @param captureId Capture id.
   * @param episodeId Only this episode.
   * @returns Kind → count.
   */
  countsByKind(captureId: string, episodeId?: string): Record<string, number> {
    return this.index.countsByKind(
      validateId("capture", captureId),
      episodeId,
    );
  }

  /**
   * The index, for queries the store does not wrap (mechanism, for the
   * harness's own use).
   * @internal
   * @throws {TypeError} When the store was opened with `index: false`.
   */
  get index(): SqliteIndex {
    if (!this.#index) {
      throw new TypeError(
        `Store ${this.root} was opened without its index (index: false)`,
      );
    }
    return this.#index;
  }

  /**
   * Record a package in the `packages` table (keyed by its digest).
   *
   * @param pkg The package document (needs `digest`, `manifest.name`, `manifest.version`).
   * @param path Where its file is.
   * @param captureIds Captures it was compiled from.
   */
  registerPackage(
    pkg: {
      digest: string;
      manifest: { name: string; version: string };
      verification?: unknown;
    },
    path: string,
    captureIds: string[],
  ): void {
    this.#assertWritable();
    insertPackage(this.index, { pkg, path, captureIds });
  }

  /**
   * Packages recorded in the index, newest first.
   *
   * @returns Rows of the `packages` table.
   */
  listPackages(): Record<string, unknown>[] {
    return selectPackages(this.index);
  }

  /**
   * Stream a capture's events from its spool, in sequence order.
   *
   * @param captureId Capture id.
   * @param options Episode filter, blob resolution.
   * @returns The events.
   */
  async *readEvents(
    captureId: string,
    options: ReadEventsOptions = {},
  ): AsyncGenerator<TraceEvent> {
    const path = this.spoolPath(captureId);
    yield* readSpoolEvents(path, {
      ...options,
      captureId,
      resolve: (ev) => this.resolve(ev),
    });
  }

  /**
   * Replace blob references in an event by their content.
   *
   * @param event A stored event.
   * @returns The event with its payload resolved.
   */
  resolve(event: TraceEvent): TraceEvent {
    const payload = resolveBlobRefs(
      event.payload,
      (d) => this.blobs.getText(d),
    );
    return payload === event.payload ? event : { ...event, payload };
  }

  /**
   * Verify a capture's spool chain, streaming, and check it against the
   * heads recorded outside it (the caller's, `heads.log`, the index).
   *
   * @param captureId Capture id.
   * @returns The chain report.
   */
  async verifyCapture(
    captureId: string,
    options: { expectHead?: { sequence: number; hash: string } | null } = {},
  ): Promise<ChainReport & { anchor: HeadAnchor | null }> {
    const { expectHead } = options;
    const anchors = headAnchors(captureId, {
      root: this.root,
      index: this.#index,
      expectHead,
    });
    return await verifyAnchored(this.spoolPath(captureId), {
      captureId,
      anchors,
    });
  }

  /**
   * Drop the derived index rows and rebuild them from the spools.
   *
   * @returns Captures and events indexed.
   */
  rebuildIndex(): { captures: number; events: number } {
    this.#assertWritable();
    this.flush();
    this.index.reset();
    return this.#catchUp();
  }

  /** Index what the spools and packages hold beyond the index. */
  #catchUp(repair = true): { captures: number; events: number } {
    return catchUpIndex({
      root: this.root,
      captureIds: this.captureIds(),
      index: this.index,
      spoolPath: (id) => this.spoolPath(id),
      repair,
      hasSink: (id) => this.#sinks.has(id),
      findings: this.findings,
      register: (pkg, path, ids) => this.registerPackage(pkg, path, ids),
    });
  }

  #assertWritable(): void {
    if (this.#closed) throw new TypeError(`Store ${this.root} is closed`);
    if (this.readOnly) {
      throw new TypeError(
        `Store ${this.root} is open read-only: open it without readOnly to write`,
      );
    }
  }

  /** Close every sink, flush the index and release the lock. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#feed.stop();
    try {
      if (!this.readOnly) this.#feed.flushIndex();
      for (const sink of this.#sinks.all()) sink.close();
      this.#feed.close();
      this.#index?.close();
    } finally {
      this.#lock?.release();
    }
  }

  /** Same as {@linkcode HarnessStore.close}. */
  [Symbol.dispose](): void {
    this.close();
  }
}
