/**
 * The store's write hooks: what its sinks call as they write (blob puts,
 * appends, append runs, spool failures, redaction), each keeping the
 * store's {@linkcode WriteHealth} bookkeeping in step with the write.
 *
 * @module
 */
import type { Payload, TraceEvent } from "../trace/event.ts";
import {
  DEFAULT_REDACTION_RULES,
  redactionSet,
  redactPayload,
} from "../trace/redact.ts";
import type { BlobStore } from "./blobs.ts";
import type { SinkTableOptions } from "./_sink_table.ts";
import type { HarnessStoreOptions } from "./store_types.ts";
import { storeWriteError } from "./store_full.ts";
import type { WriteHealth } from "./write_health.ts";

/** What the write hooks write through and report to. */
export interface WriteHooksOptions {
  /** The store's root (named by a write error). */
  root: string;
  /** The blob store the size rule writes to. */
  blobs: BlobStore;
  /** The store's write health. */
  health: WriteHealth;
  /** Feed one durable append to the index. */
  appended: SinkTableOptions["onAppended"];
  /** Bring the index up to date after an append run (may throw). */
  ranAppended: (last: TraceEvent) => void;
  /** The store's redaction rules, or false for none. */
  redaction: HarnessStoreOptions["redaction"];
}

/** The sink table's hooks that {@linkcode writeHooks} builds. */
export type WriteHooks = Pick<
  SinkTableOptions,
  "putBlob" | "onAppended" | "onRunAppended" | "onWriteFailed" | "redact"
>;

/**
 * The hooks a store's sinks call as they write, with the write-health
 * bookkeeping wired in: a blob put or spool append that fails marks its
 * part failing; a durable append marks the spool and blobs healthy again;
 * an index catch-up that fails after a run marks the index failing (the
 * run is in the spool, the index catches up when the store opens next).
 *
 * @param options Blobs, health, the index feed and redaction.
 * @returns The sink table's write hooks.
 */
export function writeHooks(options: WriteHooksOptions): WriteHooks {
  const { root, blobs, health, appended, ranAppended, redaction } = options;
  return {
    putBlob: (text) => {
      try {
        const digest = blobs.put(text);
        health.succeeded("blobs");
        return digest;
      } catch (err) {
        health.failed("blobs", err);
        throw err;
      }
    },
    onAppended: (ev, offset, length) => {
      // An event is durable with its blobs: both parts write again.
      health.succeeded("spool");
      health.succeeded("blobs");
      appended(ev, offset, length);
    },
    onRunAppended: (last) => {
      health.succeeded("spool");
      health.succeeded("blobs");
      try {
        ranAppended(last);
      } catch (err) {
        // The run is in the spool: the index (derived) catches up when
        // the store opens next; /health says why meanwhile.
        health.failed("index", err);
      }
    },
    onWriteFailed: (err) => {
      const thrown = storeWriteError(err, { root, part: "spool" });
      health.failed("spool", thrown);
      return thrown;
    },
    redact: redaction === false
      ? null
      : ((set) => (p: Payload) => redactPayload(p, set))(
        redactionSet(redaction ?? DEFAULT_REDACTION_RULES),
      ),
  };
}
