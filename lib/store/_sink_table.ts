/**
 * The sinks of one store, one per capture, and which of their spool files are
 * open: the least recently used are closed past a limit (their sinks reopen
 * them on the next event), so many captures cannot exhaust the process's
 * file handles.
 *
 * @module
 */
import { InvalidIdError } from "../trace/ids.ts";
import { JsonlTraceSink, type SinkWiring } from "./sink.ts";
import { SpoolError, type SpoolOpenInfo, SpoolWriter } from "./spool.ts";

/** What every sink of a store shares. */
export interface SinkTableOptions {
  /** Spool files kept open at most. */
  maxOpen: number;
  /** The spools' sync policy. */
  syncIntervalMs: number;
  /** While held, appends arm no sync timers (see `SpoolWriterOptions`). */
  hold?: { readonly held: boolean };
  /** Blob writer for the size rule. */
  putBlob: SinkWiring["putBlob"];
  /** Blob threshold in characters of canonical JSON. */
  blobThreshold: number;
  /** Called after each durable append. */
  onAppended: SinkWiring["onAppended"];
  /** Redaction of every payload before sealing, or null. */
  redact: SinkWiring["redact"];
  /** Called when a spool append fails; returns the error to throw. */
  onWriteFailed?: SinkWiring["onWriteFailed"];
  /** Called after an append run, with the capture and its last event. */
  onRunAppended?: SinkWiring["onRunAppended"];
}

/** The sinks of a store. */
export class SinkTable {
  readonly #sinks = new Map<string, JsonlTraceSink>();
  /** Captures whose spool file is open, least recently used first. */
  readonly #open = new Set<string>();
  #lastUsed = "";
  readonly #opts: SinkTableOptions;

  /**
   * Create a `SinkTable`.
   *
   * @param options Open-spool limit, sync policy, blobs and the append hook.
   */
  constructor(options: SinkTableOptions) {
    this.#opts = options;
  }

  /**
   * The sink of a capture, if one is open.
   *
   * @param captureId Capture id.
   * @returns Its sink, or undefined.
   */
  get(captureId: string): JsonlTraceSink | undefined {
    return this.#sinks.get(captureId);
  }

  /**
   * Whether a capture has a sink.
   *
   * @param captureId Capture id.
   * @returns True when it has one.
   */
  has(captureId: string): boolean {
    return this.#sinks.has(captureId);
  }

  /**
   * Every sink, as a list (closing one removes it from the table).
   *
   * @returns The sinks.
   */
  all(): JsonlTraceSink[] {
    return [...this.#sinks.values()];
  }

  /** Spool files open now. */
  get openCount(): number {
    return this.#open.size;
  }

  /**
   * Open (creating if needed) a capture's spool with the table's sync policy.
   *
   * @param path The spool.
   * @returns The writer and what opening found.
   * @throws {SpoolError} When the last complete line is not a sealed event.
   */
  openSpool(path: string): { writer: SpoolWriter; info: SpoolOpenInfo } {
    return SpoolWriter.open(path, {
      syncIntervalMs: this.#opts.syncIntervalMs,
      hold: this.#opts.hold,
    });
  }

  /**
   * Make the sink of a capture whose spool was just opened.
   *
   * @param captureId Capture id.
   * @param path Its spool.
   * @param opened The open spool, its chain head, and whether the capture was finished.
   * @returns The sink, in the table.
   */
  create(
    captureId: string,
    path: string,
    opened: Pick<SinkWiring, "spool" | "head" | "finished" | "onAbandoned">,
  ): JsonlTraceSink {
    const sink: JsonlTraceSink = new JsonlTraceSink(captureId, {
      ...opened,
      putBlob: this.#opts.putBlob,
      blobThreshold: this.#opts.blobThreshold,
      onAppended: this.#opts.onAppended,
      redact: this.#opts.redact,
      onWriteFailed: this.#opts.onWriteFailed,
      onRunAppended: this.#opts.onRunAppended,
      reopen: () => this.#reopen(captureId, path, sink),
      onUse: () => {
        // Most recently used last (nothing to do when it already is).
        if (this.#lastUsed === captureId) return;
        this.#lastUsed = captureId;
        this.#open.delete(captureId);
        this.#open.add(captureId);
      },
      onClose: () => {
        this.#sinks.delete(captureId);
        this.#open.delete(captureId);
      },
    });
    this.#sinks.set(captureId, sink);
    this.#open.add(captureId);
    this.#evict(captureId);
    return sink;
  }

  /** Open a suspended sink's spool again; it must end where the sink stands. */
  #reopen(captureId: string, path: string, sink: JsonlTraceSink): SpoolWriter {
    const again = this.openSpool(path);
    if (again.info.head.hash !== sink.head.hash) {
      again.writer.close();
      throw new SpoolError(
        path,
        again.info.size,
        `Capture "${captureId}" changed on disk while its spool was closed; "capture verify ${captureId}" says where`,
      );
    }
    this.#open.add(captureId);
    this.#evict(captureId);
    return again.writer;
  }

  /** Close the least recently used spools past the limit (their sinks reopen on use). */
  #evict(keep: string): void {
    for (const id of this.#open) {
      if (this.#open.size <= this.#opts.maxOpen) break;
      if (id === keep) continue;
      this.#open.delete(id);
      this.#sinks.get(id)?.suspend();
    }
  }
}

/**
 * Refuse a new capture id that differs from an existing one only by case:
 * they would share a file on some systems.
 *
 * @param captureId The new id.
 * @param existing Ids of the captures with a spool.
 * @throws {InvalidIdError} When one differs only by case.
 */
export function assertNoCaseClash(captureId: string, existing: string[]): void {
  const lower = captureId.toLowerCase();
  const clash = existing.find((id) =>
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
