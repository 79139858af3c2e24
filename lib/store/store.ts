/**
 * {@linkcode HarnessStore}: one root directory holding
 * `harness.db` (the rebuildable SQLite index), `captures/<id>.jsonl`
 * (append-only spools, the evidence) and `blobs/sha256/<hex>`.
 *
 * @module
 */
import { exists, syncDir } from "./fs_sync.ts";
import { privateDir } from "./_private_files.ts";
import { type HeadReceipt, lastReceipt, ReceiptLog } from "./heads.ts";
import { join } from "node:path";
import type { TraceEvent } from "../trace/event.ts";
import { InvalidIdError, validateId } from "../trace/ids.ts";
import { validateEvent } from "../trace/validate.ts";
import {
  type ChainReport,
  splitLines,
  splitLinesSync,
  verifyChain,
} from "../trace/jsonl.ts";
import { BlobStore } from "./blobs.ts";
import { DEFAULT_BLOB_THRESHOLD, resolveBlobRefs } from "./blob_refs.ts";
import {
  type CaptureRecord,
  type EpisodeRecord,
  SqliteIndex,
} from "./index_db.ts";
import { StoreLock } from "./lock.ts";
import { SpoolError, type SpoolOpenInfo, SpoolWriter } from "./spool.ts";
import { JsonlTraceSink } from "./sink.ts";
import { readChunks, readChunksSync } from "./file_chunks.ts";

/** Options of {@linkcode HarnessStore}. */
export interface HarnessStoreOptions {
  /**
   * Open for reading only: no lock, no repair, no writes. Readers never block
   * and never wait for the writer.
   * @default false
   */
  readOnly?: boolean;
  /**
   * What the writer is, written into the lock file.
   * @default "library"
   */
  role?: string;
  /** URL to advertise in the lock file (the ingest server's). */
  url?: string;
  /**
   * With `readOnly`, skip the index entirely: only spools and blobs are
   * read (what the compiler needs; it then needs no access to harness.db).
   * @default true
   */
  index?: boolean;
  /**
   * Canonical-JSON size above which payload values move to blobs.
   * @default 16384
   */
  blobThreshold?: number;
  /**
   * Longest wait of an appended line for `fdatasync` (power-loss window); 0 syncs each append.
   * @default 100
   */
  syncIntervalMs?: number;
  /**
   * Spool files kept open at most; the least recently used are closed
   * (their sinks reopen them on the next event), so many captures cannot
   * exhaust the process's file handles.
   * @default 128
   */
  maxOpenSpools?: number;
  /**
   * Longest delay before buffered index rows are written.
   * @default 50
   */
  indexFlushMs?: number;
  /**
   * Buffered index rows that force a write.
   * @default 5000
   */
  indexFlushRows?: number;
}

/** A repair or problem found while opening a store. */
export interface OpenFinding {
  /** The capture. */
  capture_id: string;
  /** `torn_tail_repaired`, `damaged_spool`, `unindexable_line` or `damaged_index` (capture_id empty). */
  kind: string;
  /** What happened. */
  message: string;
}

/** A head recorded outside the spool, that a verify checks the spool against. */
export interface HeadAnchor {
  /** Sequence. */
  sequence: number;
  /** Its hash. */
  hash: string;
  /** Where it came from: `expected` (the caller), `heads.log`, `index`. */
  source: string;
}

/** Options of {@linkcode HarnessStore.readEvents}. */
export interface ReadEventsOptions {
  /** Only this episode. */
  episodeId?: string;
  /**
   * Replace blob references by their content.
   * @default true
   */
  resolveBlobs?: boolean;
}

/** The store. Construct one per root and process; close it when done. */
export class HarnessStore {
  /** The root directory. */
  readonly root: string;
  /** Whether it was opened read-only. */
  readonly readOnly: boolean;
  /** The blob store. */
  readonly blobs: BlobStore;
  /** Repairs and problems found on open. */
  readonly findings: OpenFinding[] = [];
  readonly #index: SqliteIndex | null;
  readonly #lock: StoreLock | null;
  readonly #sinks = new Map<string, JsonlTraceSink>();
  readonly #opts: Required<
    Pick<
      HarnessStoreOptions,
      | "blobThreshold"
      | "syncIntervalMs"
      | "indexFlushMs"
      | "indexFlushRows"
      | "maxOpenSpools"
    >
  >;
  #receipts: ReceiptLog | null = null;
  #flushError: string | null = null;
  #unwritten: HeadReceipt[] = [];
  #lastUsed = "";
  /** Captures whose spool file is open, least recently used first. */
  readonly #openSpools = new Set<string>();
  #flushTimer: ReturnType<typeof setTimeout> | undefined;
  readonly #observers = new Set<(ev: TraceEvent) => void>();
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
    this.#opts = {
      blobThreshold: options.blobThreshold ?? DEFAULT_BLOB_THRESHOLD,
      syncIntervalMs: options.syncIntervalMs ?? 100,
      indexFlushMs: options.indexFlushMs ?? 50,
      indexFlushRows: options.indexFlushRows ?? 5000,
      maxOpenSpools: options.maxOpenSpools ?? 128,
    };
    const dbPath = join(root, "harness.db");
    if (this.readOnly && options.index === false) {
      this.#lock = null;
      this.#index = null;
      return;
    }
    if (this.readOnly) {
      try {
        Deno.statSync(dbPath);
      } catch {
        throw new Deno.errors.NotFound(
          `Store ${root} has no index (harness.db): open it once with write access, or run "ingest.ts store rebuild-index"`,
        );
      }
      this.#lock = null;
      try {
        this.#index = new SqliteIndex(dbPath, { readOnly: true });
        this.#index.listCaptures();
      } catch (err) {
        if (!isDamagedDb(err)) throw err;
        // The index is derived: read from one rebuilt in memory, and change
        // nothing on disk.
        this.#index = new SqliteIndex(":memory:");
        this.#catchUp(false);
        this.findings.push({
          capture_id: "",
          kind: "damaged_index",
          message: `The index ${dbPath} is damaged (${
            (err as Error).message
          }); read from an index rebuilt in memory. Open the store with write access (or "store rebuild-index") to rebuild it on disk`,
        });
      }
      return;
    }
    const fresh = !exists(join(root, "captures"));
    Deno.mkdirSync(join(root, "captures"), { recursive: true, mode: 0o700 });
    Deno.mkdirSync(join(root, "blobs", "sha256"), {
      recursive: true,
      mode: 0o700,
    });
    // Compiled packages are written here (by the coordinator): owner-only,
    // like the rest of the store.
    privateDir(join(root, "packages"));
    if (fresh) {
      for (const d of [root, join(root, "blobs")]) syncDir(d);
    }
    this.#lock = StoreLock.acquire(root, {
      role: options.role ?? "library",
      ...(options.url ? { url: options.url } : {}),
    });
    try {
      try {
        this.#index = new SqliteIndex(dbPath);
        this.#index.listCaptures();
      } catch (err) {
        if (!isDamagedDb(err)) throw err;
        // The index is derived: move the damaged one aside and rebuild.
        const aside = `${dbPath}.damaged-${
          new Date().toISOString().replace(/[-:.]/g, "")
        }`;
        for (const suffix of ["", "-wal", "-shm"]) {
          try {
            Deno.renameSync(dbPath + suffix, aside + suffix);
          } catch { /* not there */ }
        }
        this.#index = new SqliteIndex(dbPath);
        this.findings.push({
          capture_id: "",
          kind: "damaged_index",
          message: `The index ${dbPath} was damaged (${
            (err as Error).message
          }): moved it aside to ${aside} and rebuilt it from the spools`,
        });
      }
      this.#catchUp();
    } catch (err) {
      this.#lock.release();
      throw err;
    }
  }

  /** The lock, for a server that learns its URL after opening. */
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
    return join(
      this.root,
      "captures",
      `${validateId("capture", captureId)}.jsonl`,
    );
  }

  /**
   * Ids of every capture with a spool, sorted.
   *
   * @returns Capture ids.
   */
  captureIds(): string[] {
    const ids: string[] = [];
    try {
      for (const e of Deno.readDirSync(join(this.root, "captures"))) {
        if (e.isFile && e.name.endsWith(".jsonl")) {
          ids.push(e.name.slice(0, -6));
        }
      }
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
    return ids.sort();
  }

  /**
   * Whether a capture has a spool.
   *
   * @param captureId Capture id.
   * @returns True when it exists.
   */
  hasCapture(captureId: string): boolean {
    try {
      return Deno.statSync(this.spoolPath(captureId)).isFile;
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return false;
      throw err;
    }
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
    if (!exists(path)) {
      // Ids that differ only by case would share a file on some systems.
      const lower = captureId.toLowerCase();
      const clash = this.captureIds().find((id) =>
        id !== captureId && id.toLowerCase() === lower
      );
      if (clash) {
        throw new InvalidIdError(
          "capture",
          captureId,
          `differs from the existing capture "${clash}" only by case (the store must stay portable)`,
        );
      }
    }
    const { writer, info } = SpoolWriter.open(path, {
      syncIntervalMs: this.#opts.syncIntervalMs,
    });
    this.#noteRepair(captureId, info);
    const sink: JsonlTraceSink = new JsonlTraceSink(captureId, {
      spool: writer,
      reopen: () => {
        const again = SpoolWriter.open(path, {
          syncIntervalMs: this.#opts.syncIntervalMs,
        });
        if (again.info.head.hash !== sink.head.hash) {
          again.writer.close();
          throw new SpoolError(
            path,
            again.info.size,
            `Capture "${captureId}" changed on disk while its spool was closed; "capture verify ${captureId}" says where`,
          );
        }
        this.#openSpools.add(captureId);
        this.#evictSpools(captureId);
        return again.writer;
      },
      onUse: () => {
        // Most recently used last (nothing to do when it already is).
        if (this.#lastUsed === captureId) return;
        this.#lastUsed = captureId;
        this.#openSpools.delete(captureId);
        this.#openSpools.add(captureId);
      },
      head: info.head,
      putBlob: (text) => this.blobs.put(text),
      blobThreshold: this.#opts.blobThreshold,
      onAppended: (ev, offset, length) => this.#indexed(ev, offset, length),
      onClose: () => {
        this.#sinks.delete(captureId);
        this.#openSpools.delete(captureId);
      },
      finished: this.getCapture(captureId)?.status === "finished",
    });
    this.#sinks.set(captureId, sink);
    this.#openSpools.add(captureId);
    this.#evictSpools(captureId);
    return sink;
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
    this.#observers.add(listener);
    return () => this.#observers.delete(listener);
  }

  /** Spool files open now. */
  get openSpools(): number {
    return this.#openSpools.size;
  }

  /** Close the least recently used spools past the limit (their sinks reopen on use). */
  #evictSpools(keep: string): void {
    const max = this.#opts.maxOpenSpools;
    for (const id of this.#openSpools) {
      if (this.#openSpools.size <= max) break;
      if (id === keep) continue;
      this.#openSpools.delete(id);
      this.#sinks.get(id)?.suspend();
    }
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

  #indexed(ev: TraceEvent, offset: number, length: number): void {
    this.index.add(ev, offset, length);
    if (this.#observers.size > 0) {
      for (const listener of this.#observers) {
        try {
          listener(ev);
        } catch {
          // An observer never breaks an append.
        }
      }
    }
    if (this.index.pendingCount >= this.#opts.indexFlushRows) {
      this.flush();
    } else if (this.#flushTimer === undefined) {
      this.#flushTimer = setTimeout(
        () => this.#flushLater(),
        this.#opts.indexFlushMs,
      );
    }
  }

  /**
   * A timer's index flush. A failure (out of file handles, a full disk) must
   * not escape into the event loop, where it would end the process: it is
   * kept for `/health` ({@linkcode HarnessStore.indexFlushError}) and tried
   * again a second later; the rows stay buffered (the spool has the events).
   */
  #flushLater(): void {
    this.#flushTimer = undefined;
    if (this.#closed) return;
    try {
      this.#flushIndex();
      this.#flushError = null;
    } catch (err) {
      this.#flushError = err instanceof Error ? err.message : String(err);
      this.#flushTimer = setTimeout(() => this.#flushLater(), 1000);
    }
  }

  /** Why the last background index flush failed; null once one succeeds. */
  get indexFlushError(): string | null {
    return this.#flushError;
  }

  /** Write buffered index rows now. */
  flush(): void {
    if (this.#flushTimer !== undefined) clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    this.#flushIndex();
  }

  /** Flush the index and write a head receipt for each capture it moved. */
  #flushIndex(): void {
    const heads = this.#index?.flush() ?? [];
    if (this.readOnly) return;
    if (heads.length) {
      const at = new Date().toISOString();
      this.#unwritten.push(...heads.map((h) => ({ ...h, at })));
    }
    if (this.#unwritten.length === 0) return;
    // Written now, synced off the event loop (like the spools): after a
    // power loss a receipt may vouch for events the spool lost, which is
    // exactly what verify must then report. Receipts that could not be
    // written (the index already holds their rows) go with the next flush.
    this.#receipts ??= new ReceiptLog(this.root);
    this.#receipts.append(this.#unwritten);
    this.#unwritten = [];
  }

  /** Sync every open spool and flush the index. */
  sync(): void {
    for (const sink of this.#sinks.values()) sink.sync();
    this.flush();
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
   * The index, for queries the store does not wrap.
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
    this.index.execute(
      "INSERT OR REPLACE INTO packages VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      pkg.digest,
      pkg.manifest.name,
      pkg.manifest.version,
      pkg.digest,
      path,
      new Date().toISOString(),
      JSON.stringify(captureIds),
      JSON.stringify({ verification: pkg.verification ?? null }),
    );
  }

  /**
   * Packages recorded in the index, newest first.
   *
   * @returns Rows of the `packages` table.
   */
  listPackages(): Record<string, unknown>[] {
    return this.index.query(
      "SELECT package_id, name, version, path, created_at, capture_ids FROM packages ORDER BY created_at DESC, package_id",
    );
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
    const decoder = new TextDecoder();
    const resolve = options.resolveBlobs ?? true;
    for await (const line of splitLines(readChunks(path))) {
      if (!line.terminated) return; // torn tail: not an acknowledged event
      let ev: TraceEvent;
      try {
        ev = JSON.parse(decoder.decode(line.bytes)) as TraceEvent;
      } catch (err) {
        throw new SpoolError(
          path,
          line.offset,
          `Line ${line.lineNumber} of capture "${captureId}" is not an event (${
            (err as Error).message
          }): the spool was altered; "capture verify ${captureId}" says where`,
        );
      }
      if (
        options.episodeId !== undefined && ev.episode_id !== options.episodeId
      ) {
        continue;
      }
      yield resolve ? this.resolve(ev) : ev;
    }
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
   * Verify a capture's spool chain, streaming.
   *
   * @param captureId Capture id.
   * @returns The chain report.
   */
  async verifyCapture(
    captureId: string,
    options: { expectHead?: { sequence: number; hash: string } | null } = {},
  ): Promise<ChainReport & { anchor: HeadAnchor | null }> {
    // Anchors kept outside the spool: the caller's, the last receipt, the index.
    const receipt = lastReceipt(this.root, captureId);
    const indexed = this.#index?.getCapture(captureId);
    const anchors: HeadAnchor[] = [
      ...(options.expectHead
        ? [{ ...options.expectHead, source: "expected" }]
        : []),
      ...(receipt
        ? [{
          sequence: receipt.sequence,
          hash: receipt.hash,
          source: "heads.log",
        }]
        : []),
      ...(indexed && indexed.head_sequence > 0
        ? [{
          sequence: indexed.head_sequence,
          hash: indexed.head_hash,
          source: "index",
        }]
        : []),
    ];
    const report = await verifyChain(readChunks(this.spoolPath(captureId)), {
      captureId,
      anchors: anchors.map((a) => a.sequence),
    });
    const anchor = anchors.sort((a, b) => b.sequence - a.sequence)[0] ?? null;
    if (!report.ok || !anchor) return { ...report, anchor };
    for (const a of anchors) {
      const seen = report.hashes_at?.[a.sequence];
      if (report.head_sequence < a.sequence) {
        return {
          ...report,
          ok: false,
          anchor: a,
          problem: {
            kind: "truncated",
            sequence: report.head_sequence + 1,
            line: report.head_sequence + 1,
            byte_offset: report.bytes,
            message:
              `The spool ends at sequence ${report.head_sequence}, but ${a.source} recorded sequence ${a.sequence} (${a.hash}): acknowledged events are gone`,
          },
        };
      }
      if (seen !== undefined && seen !== a.hash) {
        return {
          ...report,
          ok: false,
          anchor: a,
          problem: {
            kind: "rewritten",
            sequence: a.sequence,
            line: a.sequence,
            byte_offset: 0,
            message:
              `Sequence ${a.sequence} hashes to ${seen}, but ${a.source} recorded ${a.hash}: the spool was rewritten and re-hashed`,
          },
        };
      }
    }
    return { ...report, anchor };
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

  #catchUp(repair = true): { captures: number; events: number } {
    let events = 0;
    const ids = this.captureIds();
    for (const id of ids) {
      const path = this.spoolPath(id);
      let size = Deno.statSync(path).size;
      if (repair && size > 0 && !this.#sinks.has(id)) {
        // Open and close the spool to repair a torn tail now.
        try {
          const { writer, info } = SpoolWriter.open(path, {
            syncIntervalMs: 0,
          });
          writer.close();
          this.#noteRepair(id, info);
          size = info.size;
        } catch (err) {
          if (!(err instanceof SpoolError)) throw err;
          // Damaged, not torn: leave it exactly as it is and say so.
          this.findings.push({
            capture_id: id,
            kind: "damaged_spool",
            message: err.message,
          });
        }
      }
      const index = this.index;
      let from = index.getCapture(id)?.indexed_bytes ?? 0;
      if (from > size) {
        // The spool is shorter than what was indexed: say so, never drop
        // the recorded head silently (the heads log keeps it too).
        this.findings.push({
          capture_id: id,
          kind: "spool_shorter_than_index",
          message:
            `The spool of capture "${id}" is ${size} bytes, shorter than the ${from} bytes indexed (head was sequence ${
              index.getCapture(id)?.head_sequence
            }): acknowledged events are gone; "capture verify ${id}" compares it with its head receipt`,
        });
        index.reset(id);
        from = 0;
      }
      if (from === size) continue;
      const decoder = new TextDecoder();
      for (
        const line of splitLinesSync(readChunksSync(path, from), {
          startOffset: from,
        })
      ) {
        if (!line.terminated) break;
        let ev: TraceEvent;
        try {
          ev = JSON.parse(decoder.decode(line.bytes));
        } catch {
          this.findings.push({
            capture_id: id,
            kind: "unindexable_line",
            message:
              `Capture "${id}" has a line at byte ${line.offset} that is not JSON; indexed up to it. Run "capture verify ${id}"`,
          });
          break;
        }
        index.add(ev, line.offset, line.bytes.length);
        events++;
        if (index.pendingCount >= 20_000) index.flush();
      }
    }
    this.#index?.flush();
    this.#catchUpPackages();
    return { captures: ids.length, events };
  }

  /** Register package files under `<root>/packages/` the index does not know. */
  #catchUpPackages(): void {
    const dir = join(this.root, "packages");
    let names: string[] = [];
    try {
      names = [...Deno.readDirSync(dir)].filter((e) =>
        e.isFile && e.name.endsWith(".package.json")
      )
        .map((e) => e.name).sort();
    } catch {
      return;
    }
    const known = new Set(
      this.index.query("SELECT package_id FROM packages").map((r) =>
        r.package_id
      ),
    );
    for (const name of names) {
      try {
        const pkg = JSON.parse(Deno.readTextFileSync(join(dir, name)));
        if (typeof pkg?.digest !== "string" || known.has(pkg.digest)) continue;
        let captureIds: string[] = [];
        try {
          const side = JSON.parse(
            Deno.readTextFileSync(join(dir, `${name}.captures.json`)),
          );
          if (Array.isArray(side?.capture_ids)) {
            captureIds = side.capture_ids.filter((x: unknown) =>
              typeof x === "string"
            );
          }
        } catch { /* no record of its captures */ }
        this.registerPackage(pkg, join(dir, name), captureIds);
      } catch { /* not a package: leave it */ }
    }
  }

  #noteRepair(captureId: string, info: SpoolOpenInfo): void {
    if (info.repaired) {
      this.findings.push({
        capture_id: captureId,
        kind: "torn_tail_repaired",
        message:
          `Capture "${captureId}": a torn last line (${info.repaired.bytes} bytes at ${info.repaired.offset}) was moved to ${info.repaired.saved_to}`,
      });
    }
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
    if (this.#flushTimer !== undefined) clearTimeout(this.#flushTimer);
    try {
      if (!this.readOnly) this.#flushIndex();
      for (const sink of [...this.#sinks.values()]) sink.close();
      this.#receipts?.close();
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

/** Whether an error says a SQLite file is not a usable database. */
function isDamagedDb(err: unknown): boolean {
  return /not a database|malformed|corrupt|encrypted|disk image/i.test(
    (err as Error)?.message ?? "",
  );
}
