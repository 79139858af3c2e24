/**
 * {@linkcode JsonlTraceSink}: the one writer of a capture's chain. It seals
 * each event (sequence + hashes), appends its line to the spool and hands the
 * row to the index.
 *
 * @module
 */
import type { Payload, TraceEvent, UnsealedEvent } from "../trace/event.ts";
import type { ChainHead } from "../trace/chain.ts";
import { HashChainer, type SealedEvent } from "../trace/chain.ts";
import { validateId } from "../trace/ids.ts";
import type { SpoolWriter } from "./spool.ts";
import { externalizePayload, type PutBlob } from "./blob_refs.ts";

/** Anything that accepts events for a chain: a store sink, or a remote one. */
export interface TraceSink {
  /**
   * Record one event; returns it sealed.
   * @param event The unsealed event.
   */
  emit(event: UnsealedEvent): TraceEvent;
}

/** What a sink needs from its store. */
export interface SinkWiring {
  /** The capture's spool, opened and repaired. */
  spool: SpoolWriter;
  /** Chain head restored from the spool. */
  head: ChainHead;
  /** Blob writer for the size rule. */
  putBlob: PutBlob;
  /** Blob threshold in characters of canonical JSON. */
  blobThreshold: number;
  /** Called after each durable append. */
  onAppended: (event: TraceEvent, offset: number, length: number) => void;
  /**
   * Called after an append run ({@linkcode JsonlTraceSink.emitRun}) with
   * its last event: the run's lines are in the spool, not yet indexed.
   */
  onRunAppended?: (last: TraceEvent) => void;
  /** Called by close(). */
  onClose: () => void;
  /** The capture was finished before this sink opened. */
  finished?: boolean;
  /**
   * Open the spool again after the store closed it to save file handles
   * (the chain head it finds must be this sink's).
   */
  reopen?: () => SpoolWriter;
  /**
   * Called when a spool append fails; returns the error to throw (the
   * store records the failure for its health and names a full disk).
   */
  onWriteFailed?: (err: unknown) => unknown;
  /**
   * The sink created its spool file (the capture is new): when nothing was
   * written yet and an emit fails, the sink closes and calls this to take
   * the empty file away, so a refused first write leaves no empty capture.
   */
  onAbandoned?: () => void;
  /** Called before each append (the store's least-recently-used order). */
  onUse?: () => void;
  /**
   * Redaction applied to every payload before it is sealed (credential
   * shapes; every path into the store goes through a sink); null for none.
   */
  redact?: ((payload: Payload) => Payload) | null;
}

/** An event for a capture that was finished. */
export class CaptureFinishedError extends Error {
  /** The capture. */
  readonly captureId: string;
  /**
   * Create a `CaptureFinishedError`.
   *
   * @param captureId The capture.
   */
  constructor(captureId: string) {
    super(
      `Capture "${captureId}" is finished and takes no more events: start a new one ("capture start")`,
    );
    this.name = "CaptureFinishedError";
    this.captureId = captureId;
  }
}

/** Appends and indexes the events of one capture. Get it from `store.sink(id)`. */
export class JsonlTraceSink implements TraceSink {
  /** The capture this sink writes. */
  readonly captureId: string;
  #chainer: HashChainer;
  readonly #wiring: SinkWiring;
  #spool: SpoolWriter | null;
  #closed = false;
  #finished: boolean;
  #lastEpisode = "";
  /** An append run is being written: nothing else may be. */
  #running = false;

  /**
   * Create a `JsonlTraceSink`. The store does, in `store.sink(id)`.
   *
   * @internal
   * @param captureId The capture.
   * @param wiring Spool, head, blobs and callbacks from the store.
   */
  constructor(captureId: string, wiring: SinkWiring) {
    this.captureId = captureId;
    this.#wiring = wiring;
    this.#chainer = new HashChainer(wiring.head);
    this.#finished = wiring.finished ?? false;
    this.#spool = wiring.spool;
  }

  /** Whether the spool file is open now (the store may close idle ones). */
  get open(): boolean {
    return this.#spool !== null;
  }

  /**
   * Close the spool file to free its handle; the next emit opens it again.
   * Everything written stays written (it is synced first).
   */
  suspend(): void {
    if (!this.#spool) return;
    this.#spool.close();
    this.#spool = null;
  }

  #writer(): SpoolWriter {
    this.#wiring.onUse?.();
    if (this.#spool) return this.#spool;
    if (!this.#wiring.reopen) {
      throw new TypeError(
        `Cannot emit to capture "${this.captureId}": its spool was closed`,
      );
    }
    this.#spool = this.#wiring.reopen();
    return this.#spool;
  }

  #noteFinished(ev: UnsealedEvent): void {
    if (ev.kind === "annotation" && ev.payload.type === "capture.finished") {
      this.#finished = true;
    }
  }

  /** Where the chain stands. */
  get head(): ChainHead {
    return this.#chainer.head;
  }

  /** Whether {@linkcode JsonlTraceSink.close} was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Seal, append and index one event. When this returns, the line is written
   * (it survives the process being killed).
   *
   * @param event The unsealed event (its capture must be this sink's).
   * @returns The sealed event as stored (large values as blob references).
   * @throws {TypeError} For a wrong capture, a bad episode id or a value JSON cannot hold.
   * @throws {StoreFullError} When the disk is full (nothing is written).
   */
  emit(event: UnsealedEvent): TraceEvent {
    this.#assertNotRunning();
    const w = this.#wiring;
    let sealed: SealedEvent;
    let placed: { offset: number; length: number };
    try {
      sealed = this.#seal(event);
      try {
        placed = this.#writer().append(sealed.line);
      } catch (err) {
        throw w.onWriteFailed?.(err) ?? err;
      }
    } catch (err) {
      this.#abandonIfEmpty();
      throw err;
    }
    const { offset, length } = placed;
    this.#chainer.commit(sealed);
    w.onAppended(sealed.event, offset, length);
    this.#noteFinished(event);
    return sealed.event;
  }

  /**
   * Seal, append (with one write) and index several events in order. When
   * this returns, all of them are written; if the write fails, none is.
   *
   * @param events The unsealed events, in order.
   * @returns The sealed events as stored.
   * @throws {TypeError} For a wrong capture, a bad episode id or a value JSON cannot hold.
   * @throws {StoreFullError} When the disk is full (nothing is written).
   */
  emitMany(events: UnsealedEvent[]): TraceEvent[] {
    this.#assertNotRunning();
    const before = this.#chainer.head;
    const sealed: SealedEvent[] = [];
    let finishing = false;
    try {
      for (const ev of events) {
        if (finishing) throw new CaptureFinishedError(this.captureId);
        const s = this.#seal(ev);
        this.#chainer.commit(s);
        sealed.push(s);
        finishing = ev.kind === "annotation" &&
          ev.payload.type === "capture.finished";
      }
    } catch (err) {
      this.#chainer = new HashChainer(before);
      this.#abandonIfEmpty();
      throw err;
    }
    let placed: { offset: number; length: number }[];
    try {
      placed = this.#writer().appendMany(sealed.map((s) => s.line));
    } catch (err) {
      this.#chainer = new HashChainer(before);
      const thrown = this.#wiring.onWriteFailed?.(err) ?? err;
      this.#abandonIfEmpty();
      throw thrown;
    }
    for (let i = 0; i < sealed.length; i++) {
      this.#wiring.onAppended(
        sealed[i].event,
        placed[i].offset,
        placed[i].length,
      );
    }
    if (finishing) this.#finished = true;
    return sealed.map((s) => s.event);
  }

  /**
   * Seal and append a long run of events given in batches (a streamed
   * import), as one unit: each batch is one write, and nothing of the run
   * is indexed or told to observers until all of it is written. If any
   * batch fails (a bad event, a full disk, the batches' source throws), the
   * spool is cut back to where the run started and the chain restored:
   * none of it stays. Memory follows one batch, not the run. Other emits
   * to this capture are refused while the run is written.
   *
   * @param batches The events, in order, a batch at a time.
   * @returns How many events were written, and the last of them (null for none).
   * @throws {TypeError} For a wrong capture, a bad episode id, a value JSON cannot hold, or a run already under way.
   * @throws {StoreFullError} When the disk is full (nothing of the run is kept).
   */
  async emitRun(
    batches: AsyncIterable<UnsealedEvent[]> | Iterable<UnsealedEvent[]>,
  ): Promise<{ events: number; last: TraceEvent | null }> {
    this.#assertNotRunning();
    this.#running = true;
    const before = this.#chainer.head;
    let start = -1;
    let events = 0;
    let last: TraceEvent | null = null;
    let finishing = false;
    try {
      start = this.#writer().size;
      for await (const batch of batches) {
        const lines: string[] = [];
        for (const ev of batch) {
          if (finishing) throw new CaptureFinishedError(this.captureId);
          const s = this.#seal(ev);
          this.#chainer.commit(s);
          lines.push(s.line);
          last = s.event;
          finishing = ev.kind === "annotation" &&
            ev.payload.type === "capture.finished";
        }
        if (lines.length === 0) continue;
        try {
          this.#writer().appendMany(lines);
        } catch (err) {
          throw this.#wiring.onWriteFailed?.(err) ?? err;
        }
        events += lines.length;
      }
    } catch (err) {
      this.#chainer = new HashChainer(before);
      if (start >= 0) {
        try {
          this.#writer().cutBack(start);
        } catch { /* the original error says more */ }
      }
      this.#running = false;
      this.#abandonIfEmpty();
      throw err;
    }
    this.#running = false;
    if (last) this.#wiring.onRunAppended?.(last);
    if (finishing) this.#finished = true;
    return { events, last };
  }

  #assertNotRunning(): void {
    if (this.#running) {
      throw new TypeError(
        `Cannot emit to capture "${this.captureId}" while a run of events (an import) is being written to it: wait until it ends`,
      );
    }
  }

  /** A new capture whose first write failed: no empty spool stays behind. */
  #abandonIfEmpty(): void {
    if (
      this.#closed || !this.#wiring.onAbandoned ||
      this.#chainer.head.sequence !== 0
    ) return;
    this.close();
    this.#wiring.onAbandoned();
  }

  #seal(event: UnsealedEvent): SealedEvent {
    if (this.#closed) {
      throw new TypeError(
        `Cannot emit to capture "${this.captureId}": its sink is closed`,
      );
    }
    if (this.#finished) throw new CaptureFinishedError(this.captureId);
    if (event.capture_id !== this.captureId) {
      throw new TypeError(
        `Cannot emit an event of capture "${event.capture_id}" to the sink of "${this.captureId}"`,
      );
    }
    if (event.episode_id !== this.#lastEpisode) {
      validateId("episode", event.episode_id);
      this.#lastEpisode = event.episode_id;
    }
    const w = this.#wiring;
    if (w.redact) {
      const payload = w.redact(event.payload);
      if (payload !== event.payload) event = { ...event, payload };
    }
    let sealed = this.#chainer.prepare(event);
    // The payload is shorter than its line: only a long line can need blobs.
    if (sealed.line.length > w.blobThreshold) {
      const payload = externalizePayload(
        event.payload,
        w.putBlob,
        w.blobThreshold,
      );
      if (payload !== event.payload) {
        sealed = this.#chainer.prepare({ ...event, payload });
      }
    }
    return sealed;
  }

  /** Sync the spool now (otherwise it is synced in groups). */
  sync(): void {
    this.#spool?.sync();
  }

  /** Sync the spool in the background, grouped, if anything waits. */
  syncSoon(): void {
    this.#spool?.syncSoon();
  }

  /** Close the spool; the store opens a new sink on the next `sink()`. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.#spool?.close();
      this.#spool = null;
    } finally {
      this.#wiring.onClose();
    }
  }
}
