/**
 * A sink for one capture that works whether or not an ingest server owns
 * the store: the store's own sink when this process can take the store's
 * lock, else an {@linkcode HttpTraceSink} to the server that holds it.
 *
 * @module
 */
import { HarnessStore } from "../store/store.ts";
import { StoreLockedError } from "../store/lock.ts";
import type { UnsealedEvent } from "../trace/event.ts";
import { type EventSink, HttpTraceSink } from "./event_sink.ts";

/** A sink plus what to close when done. */
export interface RecordingSink extends EventSink, AsyncDisposable {
  /** `store` (this process writes) or `http` (through the ingest server). */
  readonly mode: "store" | "http";
  /** Where events go: the store root or the server URL. */
  readonly target: string;
  /** Events that could not be recorded. */
  readonly dropped: number;
  /** Deliver what is pending and release the store. */
  close(): Promise<void>;
}

/**
 * Open a recording sink for a capture.
 *
 * @param root Store root.
 * @param captureId Capture id.
 * @param options Role for the lock file, token for the HTTP path.
 * @returns The sink.
 * @throws {StoreLockedError} When the store is locked by a holder with no URL.
 */
export function openRecordingSink(
  root: string,
  captureId: string,
  options: { role?: string; token?: string } = {},
): RecordingSink {
  try {
    const store = new HarnessStore(root, { role: options.role ?? "recorder" });
    const sink = store.sink(captureId);
    let dropped = 0;
    return {
      mode: "store",
      target: root,
      get dropped() {
        return dropped;
      },
      emit(ev: UnsealedEvent) {
        try {
          return sink.emit(ev);
        } catch (err) {
          dropped++;
          throw err;
        }
      },
      close() {
        store.close();
        return Promise.resolve();
      },
      [Symbol.asyncDispose]() {
        return this.close();
      },
    };
  } catch (err) {
    if (!(err instanceof StoreLockedError) || !err.owner?.url) throw err;
    const http = new HttpTraceSink(err.owner.url, { token: options.token });
    return {
      mode: "http",
      target: err.owner.url,
      get dropped() {
        return http.dropped;
      },
      emit: (ev: UnsealedEvent) => http.emit(ev),
      close: () => http.flush(),
      [Symbol.asyncDispose]() {
        return http.flush();
      },
    };
  }
}
