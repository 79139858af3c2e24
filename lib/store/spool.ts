/**
 * Append-only spool files `captures/<capture_id>.jsonl`. A write is one
 * synchronous `write` of a whole line, so once {@linkcode SpoolWriter.append}
 * returns the line is in the kernel and survives the process being killed.
 * Data is `fdatasync`ed in groups: at most `syncIntervalMs` after an append
 * (the power-loss window; the sync runs off the JS thread). A torn last line, left by a kill in the middle of
 * a write, is moved aside to `<spool>.torn-<offset>` and cut off on open;
 * complete lines are never touched.
 *
 * @module
 */
import { exists, syncDir } from "./fs_sync.ts";
import { dirname } from "node:path";
import type { TraceEvent } from "../trace/event.ts";
import type { ChainHead } from "../trace/chain.ts";
import { computeEventHash, GENESIS_HEAD } from "../trace/chain.ts";

/** A spool that cannot be appended to safely. */
export class SpoolError extends SyntaxError {
  /** The spool file. */
  readonly path: string;
  /** Byte offset of the problem. */
  readonly byteOffset: number;
  /**
   * Create a `SpoolError`.
   *
   * @param path The spool file.
   * @param byteOffset Where the problem is.
   * @param message What is wrong and what to do.
   * @param options Cause.
   */
  constructor(
    path: string,
    byteOffset: number,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "SpoolError";
    this.path = path;
    this.byteOffset = byteOffset;
  }
}

/** What opening a spool found and did. */
export interface SpoolOpenInfo {
  /** Chain head restored from the last line. */
  head: ChainHead;
  /** Size in bytes after any repair. */
  size: number;
  /** A torn tail that was moved aside, if any. */
  repaired: { offset: number; bytes: number; saved_to: string } | null;
}

/** Options of {@linkcode SpoolWriter}. */
export interface SpoolWriterOptions {
  /**
   * Longest time an appended line waits for `fdatasync`; 0 syncs every append.
   * @default 100
   */
  syncIntervalMs?: number;
  /**
   * While `held` is true, an append arms no sync timer: its holder syncs
   * soon itself (`sync()`, then `syncSoon()` if that failed).
   */
  hold?: { readonly held: boolean };
}

const encoder = new TextEncoder();

/** Appends lines to one spool file. */
export class SpoolWriter {
  /** Path of the file. */
  readonly path: string;
  readonly #file: Deno.FsFile;
  readonly #syncIntervalMs: number;
  readonly #hold: { readonly held: boolean } | undefined;
  #size: number;
  #lastSync = 0;
  #dirty = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #syncing: Promise<void> | null = null;
  #buf = new Uint8Array(4096);
  #closed = false;

  private constructor(
    path: string,
    file: Deno.FsFile,
    size: number,
    options: SpoolWriterOptions,
  ) {
    this.path = path;
    this.#file = file;
    this.#size = size;
    this.#syncIntervalMs = options.syncIntervalMs ?? 100;
    this.#hold = options.hold;
  }

  /**
   * Open (creating if needed) a spool, repair a torn tail and restore the
   * chain head from the last line.
   *
   * @param path The spool file.
   * @param options Sync policy.
   * @returns The writer and what was found.
   * @throws {SpoolError} When the last complete line is not a sealed event.
   */
  static open(
    path: string,
    options: SpoolWriterOptions = {},
  ): { writer: SpoolWriter; info: SpoolOpenInfo } {
    const fresh = !exists(path);
    const file = Deno.openSync(path, {
      read: true,
      append: true,
      create: true,
      mode: 0o600,
    });
    // A new spool's directory entry must survive a power loss too.
    if (fresh) syncDir(dirname(path));
    try {
      const info = inspectTail(file, path);
      return { writer: new SpoolWriter(path, file, info.size, options), info };
    } catch (err) {
      file.close();
      throw err;
    }
  }

  /**
   * Cut the file back to `offset`: the end of an append run that failed
   * (nothing after it was acknowledged), then sync.
   *
   * @param offset Where the run started.
   * @throws {RangeError} When `offset` is past the end.
   */
  cutBack(offset: number): void {
    if (offset > this.#size) {
      throw new RangeError(
        `Cannot cut ${this.path} back to byte ${offset}: it has ${this.#size}`,
      );
    }
    this.#file.truncateSync(offset);
    this.#size = offset;
    this.#dirty = true;
    this.sync();
  }

  /** Current size in bytes. */
  get size(): number {
    return this.#size;
  }

  /**
   * Append one line (a newline is added). On a failed write the file is cut
   * back to where it was, so a half-written line never stays.
   *
   * @param line The line, without newline.
   * @returns Byte offset and length (without newline) of the line.
   */
  append(line: string): { offset: number; length: number } {
    if (this.#closed) {
      throw new TypeError(`Cannot append to ${this.path}: the spool is closed`);
    }
    const need = line.length * 3 + 1;
    if (this.#buf.length < need) this.#buf = new Uint8Array(need * 2);
    const { written } = encoder.encodeInto(line, this.#buf);
    this.#buf[written] = 10;
    this.#write(this.#buf.subarray(0, written + 1));
    return { offset: this.#size - written - 1, length: written };
  }

  /** Write bytes at the end; on failure cut the file back. */
  #write(bytes: Uint8Array): void {
    const offset = this.#size;
    try {
      let done = 0; // O_APPEND: every write lands at the end
      while (done < bytes.length) {
        done += this.#file.writeSync(bytes.subarray(done));
      }
    } catch (err) {
      try {
        this.#file.truncateSync(offset);
      } catch { /* the original error says more */ }
      throw err;
    }
    this.#size = offset + bytes.length;
    this.#dirty = true;
    this.#maybeSync();
  }

  /**
   * Append several lines with one write: all are durable (against a killed
   * process) when this returns, or none stays.
   *
   * @param lines The lines, without newlines.
   * @returns Byte offset and length (without newline) of each line.
   */
  appendMany(lines: string[]): { offset: number; length: number }[] {
    if (this.#closed) {
      throw new TypeError(`Cannot append to ${this.path}: the spool is closed`);
    }
    let need = 0;
    for (const line of lines) need += line.length * 3 + 1;
    if (this.#buf.length < need) this.#buf = new Uint8Array(need * 2);
    const offset = this.#size;
    const placed: { offset: number; length: number }[] = [];
    let at = 0;
    for (const line of lines) {
      const { written } = encoder.encodeInto(line, this.#buf.subarray(at));
      placed.push({ offset: offset + at, length: written });
      at += written;
      this.#buf[at++] = 10;
    }
    this.#write(this.#buf.subarray(0, at));
    return placed;
  }

  #maybeSync(): void {
    if (this.#syncIntervalMs === 0) {
      this.sync();
      return;
    }
    if (
      this.#syncing || this.#timer !== undefined || this.#hold?.held
    ) return;
    const wait = Math.max(
      0,
      this.#syncIntervalMs - (Date.now() - this.#lastSync),
    );
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#syncInBackground();
    }, wait);
  }

  /** `fdatasync` off the JS thread, so appends go on meanwhile. */
  #syncInBackground(): void {
    if (this.#closed || !this.#dirty) return;
    this.#dirty = false;
    this.#syncing = this.#file.syncData().catch(() => {
      this.#dirty = true; // try again after the next append
    }).finally(() => {
      this.#syncing = null;
      this.#lastSync = Date.now();
      if (this.#dirty && !this.#closed) this.#maybeSync();
    });
  }

  /**
   * `fdatasync` now if anything was appended since the last sync (a grouped
   * sync that was waiting for its timer is then done: the timer goes).
   */
  sync(): void {
    if (this.#dirty) {
      this.#file.syncDataSync();
      this.#dirty = false;
    }
    this.#lastSync = Date.now();
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
  }

  /** Sync in the background, grouped as appends are, if anything waits. */
  syncSoon(): void {
    if (this.#dirty && !this.#closed) this.#maybeSync();
  }

  /** Sync and close the file. */
  close(): void {
    if (this.#closed) return;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    try {
      this.sync();
    } finally {
      this.#closed = true;
      this.#file.close();
    }
  }
}

function inspectTail(file: Deno.FsFile, path: string): SpoolOpenInfo {
  let size = file.statSync().size;
  if (size === 0) return { head: GENESIS_HEAD, size, repaired: null };
  let repaired: SpoolOpenInfo["repaired"] = null;
  const last = readByte(file, size - 1);
  if (last !== 10) {
    const cut = lastNewlineBefore(file, size) + 1; // 0 when none
    const torn = readRange(file, cut, size - cut);
    const savedTo = `${path}.torn-${cut}`;
    Deno.writeFileSync(savedTo, torn, { mode: 0o600 });
    file.truncateSync(cut);
    file.syncDataSync();
    repaired = { offset: cut, bytes: torn.length, saved_to: savedTo };
    size = cut;
    if (size === 0) return { head: GENESIS_HEAD, size, repaired };
  }
  const start = lastNewlineBefore(file, size - 1) + 1;
  const text = new TextDecoder().decode(
    readRange(file, start, size - 1 - start),
  );
  let ev: TraceEvent;
  try {
    ev = JSON.parse(text);
  } catch (err) {
    throw new SpoolError(
      path,
      start,
      `Cannot append to ${path}: its last line (byte ${start}) is not JSON; run "capture verify" and restore the spool from a backup`,
      { cause: err },
    );
  }
  if (
    typeof ev?.sequence !== "number" || computeEventHash(ev) !== ev.event_hash
  ) {
    throw new SpoolError(
      path,
      start,
      `Cannot append to ${path}: its last line (byte ${start}) is not a sealed event; run "capture verify" to find the damage`,
    );
  }
  return {
    head: { sequence: ev.sequence, hash: ev.event_hash },
    size,
    repaired,
  };
}

function readByte(file: Deno.FsFile, at: number): number {
  return readRange(file, at, 1)[0];
}

function readRange(file: Deno.FsFile, at: number, length: number): Uint8Array {
  const out = new Uint8Array(length);
  file.seekSync(at, Deno.SeekMode.Start);
  let done = 0;
  while (done < length) {
    const n = file.readSync(out.subarray(done));
    if (n === null) break;
    done += n;
  }
  return out.subarray(0, done);
}

/** Offset of the last `\n` strictly before `end`, or -1. */
function lastNewlineBefore(file: Deno.FsFile, end: number): number {
  const step = 65_536;
  let hi = end;
  while (hi > 0) {
    const lo = Math.max(0, hi - step);
    const chunk = readRange(file, lo, hi - lo);
    const i = chunk.lastIndexOf(10);
    if (i >= 0) return lo + i;
    hi = lo;
  }
  return -1;
}
