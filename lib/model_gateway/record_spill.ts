/**
 * {@linkcode RecordSpill}: exchanges the recorder cannot take now, kept on
 * the store's disk until they are recorded, in order. One file,
 * `<root>/model_gateway/spill.jsonl` (private: the folder 0700, the file
 * 0600), one tape per line (`exchange_tape.ts`), appended with one
 * `write(2)` each (no fsync: it outlives the process, `kill -9` included,
 * not the machine's power). Tapes are read back in the order written; once
 * every tape is recorded the file is emptied. What a process left in it is
 * recorded at the next start (`ModelGateway.restore`), each tape once
 * (a tape whose request is in its capture already was recorded before the
 * process stopped).
 *
 * The seed's layout names `harness.db`, `captures/` and `blobs/`; the
 * spill is beside them, never in `captures/` (a spool there is a capture).
 *
 * @module
 */
import { join } from "node:path";
import {
  PRIVATE_DIR_MODE,
  PRIVATE_FILE_MODE,
} from "../store/_private_files.ts";

/** The spill's folder under the store's root. */
export const SPILL_DIR = "model_gateway";
/** The spill's file in it. */
export const SPILL_FILE = "spill.jsonl";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Where one tape lies in the file. */
export interface TapeAt {
  /** Byte offset. */
  offset: number;
  /** Byte length, without the newline. */
  length: number;
}

/** The spill file of one store. */
export class RecordSpill {
  readonly #path: string;
  #file: Deno.FsFile | null = null;
  #end = 0;

  /**
   * Create a `RecordSpill` (nothing is opened until the first tape).
   *
   * @param root The store's root.
   */
  constructor(root: string) {
    this.#path = join(root, SPILL_DIR, SPILL_FILE);
  }

  /** The file's path. */
  get path(): string {
    return this.#path;
  }

  #open(): Deno.FsFile {
    if (this.#file) return this.#file;
    Deno.mkdirSync(join(this.#path, ".."), {
      recursive: true,
      mode: PRIVATE_DIR_MODE,
    });
    const f = Deno.openSync(this.#path, {
      read: true,
      write: true,
      create: true,
      mode: PRIVATE_FILE_MODE,
    });
    this.#end = f.statSync().size;
    this.#file = f;
    return f;
  }

  /**
   * Append one tape (one line, one write).
   *
   * @param line The tape's JSON, without a newline.
   * @returns Where it lies.
   */
  append(line: string): TapeAt {
    const f = this.#open();
    const bytes = encoder.encode(`${line}\n`);
    f.seekSync(this.#end, Deno.SeekMode.Start);
    let at = 0;
    while (at < bytes.length) at += f.writeSync(bytes.subarray(at));
    const placed = { offset: this.#end, length: bytes.length - 1 };
    this.#end += bytes.length;
    return placed;
  }

  /**
   * Read one tape back.
   *
   * @param at Where it lies.
   * @returns Its JSON text.
   */
  read(at: TapeAt): string {
    const f = this.#open();
    const buf = new Uint8Array(at.length);
    f.seekSync(at.offset, Deno.SeekMode.Start);
    let got = 0;
    while (got < at.length) {
      const n = f.readSync(buf.subarray(got));
      if (n === null || n === 0) break;
      got += n;
    }
    return decoder.decode(buf.subarray(0, got));
  }

  /** Empty the file (every tape in it is recorded) and close it. */
  clear(): void {
    if (this.#file === null) {
      try {
        if (Deno.statSync(this.#path).size === 0) return;
      } catch {
        return;
      }
    }
    const f = this.#open();
    f.truncateSync(0);
    this.#end = 0;
    // Open only while tapes wait in it.
    this.close();
  }

  /**
   * The tapes a stopped process left, in order (a torn last line, cut by
   * the stop, is left out).
   *
   * @returns Each tape's JSON text.
   */
  leftOver(): string[] {
    let text: string;
    try {
      text = Deno.readTextFileSync(this.#path);
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return [];
      throw err;
    }
    const lines = text.split("\n");
    // The last piece has no newline: a tape cut mid-write, or "".
    lines.pop();
    return lines.filter((l) => l !== "");
  }

  /** Close the file. */
  close(): void {
    this.#file?.close();
    this.#file = null;
  }
}
