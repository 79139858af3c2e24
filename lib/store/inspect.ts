/**
 * `capture inspect`: one pass over a capture's spool for counts and
 * fidelity, one streaming chain check, plus the index's records. A reading
 * of the store, so that the ingest server (`GET /capture/<id>/summary`) and
 * the control plane share it without ingest importing control; `./control`
 * re-exports it.
 *
 * @module
 */
import type { CaptureReader } from "./reader.ts";
import type { CaptureRecord } from "./index_records.ts";
import type { ChainReport } from "../trace/jsonl.ts";
import { type Fidelity, FidelityTracker } from "./fidelity.ts";

/** One episode in an inspection. */
export interface EpisodeInspection {
  /** Episode id. */
  episode_id: string;
  /** Events. */
  event_count: number;
  /** First and last sequence. */
  first_sequence: number;
  /** Last sequence. */
  last_sequence: number;
  /** Whether it has `episode.started` / `episode.finished`. */
  started: boolean;
  /** Whether it has `episode.finished`. */
  finished: boolean;
  /** Event counts by kind. */
  counts_by_kind: Record<string, number>;
  /** Fidelity of the episode's events. */
  fidelity: Fidelity;
  /** Calls started and never completed or failed. */
  incomplete_calls: number;
  /**
   * Tokens the host reported for the episode's model responses, summed
   * (null where the host reports none).
   */
  tokens: {
    input: number;
    output: number;
    responses: number;
    /** `model_gateway` when the model gateway counted them (every model call), else absent (the host's transcripts). */
    source?: string;
    /**
     * True when the host's events say some model calls were not counted
     * (`annotation` `usage.partial`: a compaction's summariser on host_a);
     * absent when the count is whole or the model gateway counted.
     */
    partial?: true;
  } | null;
}

/** Everything `capture inspect` shows. */
export interface CaptureInspection {
  /** The index's record. */
  capture: CaptureRecord | null;
  /** Episodes in order of first event. */
  episodes: EpisodeInspection[];
  /** Counts by kind over the capture. */
  counts_by_kind: Record<string, number>;
  /** Fidelity of the capture. */
  fidelity: Fidelity;
  /** The chain check of the spool. */
  chain: ChainReport;
}

/** The capture has no spool. */
export class CaptureNotFoundError extends Error {
  /** The capture id. */
  readonly captureId: string;
  /**
   * Create a `CaptureNotFoundError`.
   *
   * @param captureId The capture id.
   * @param root The store root.
   */
  constructor(captureId: string, root: string) {
    super(
      `Capture "${captureId}" not found in store ${root}: "capture list" shows the captures there`,
    );
    this.name = "CaptureNotFoundError";
    this.captureId = captureId;
  }
}

function sorted(counts: Map<string, number>): Record<string, number> {
  return Object.fromEntries([...counts].sort(([a], [b]) => a < b ? -1 : 1));
}

/**
 * Inspect one capture.
 *
 * @param store The store.
 * @param captureId The capture.
 * @returns The inspection.
 * @throws {CaptureNotFoundError} When the capture has no spool.
 */
export async function inspectCapture(
  store: CaptureReader,
  captureId: string,
): Promise<CaptureInspection> {
  if (!store.hasCapture(captureId)) {
    throw new CaptureNotFoundError(captureId, store.root);
  }
  const total = new Map<string, number>();
  const capFidelity = new FidelityTracker();
  const eps = new Map<string, {
    ep: EpisodeInspection;
    counts: Map<string, number>;
    fid: FidelityTracker;
    open: Set<string>;
    gateway?: { input: number; output: number; responses: number };
    partial?: true;
  }>();
  for await (const ev of store.readEvents(captureId, { resolveBlobs: false })) {
    total.set(ev.kind, (total.get(ev.kind) ?? 0) + 1);
    capFidelity.observe(ev);
    let e = eps.get(ev.episode_id);
    if (!e) {
      e = {
        ep: {
          episode_id: ev.episode_id,
          event_count: 0,
          first_sequence: ev.sequence,
          last_sequence: ev.sequence,
          started: false,
          finished: false,
          counts_by_kind: {},
          fidelity: "F0",
          incomplete_calls: 0,
          tokens: null,
        },
        counts: new Map(),
        fid: new FidelityTracker(),
        open: new Set(),
      };
      eps.set(ev.episode_id, e);
    }
    e.ep.event_count++;
    e.ep.last_sequence = ev.sequence;
    e.counts.set(ev.kind, (e.counts.get(ev.kind) ?? 0) + 1);
    e.fid.observe(ev);
    if (ev.kind === "episode.started") e.ep.started = true;
    if (ev.kind === "episode.finished") e.ep.finished = true;
    if (ev.kind === "tool.call.started") e.open.add(ev.event_id);
    if (ev.kind === "annotation" && ev.payload.type === "usage.partial") {
      e.partial = true;
    }
    if (ev.kind === "model.responded") {
      type Usage = { input_tokens?: unknown; output_tokens?: unknown };
      // Hosts and conversations put usage in the response; a tree leaf's
      // response is its outputs, so the runtime puts usage beside it.
      const usage = (ev.payload.response as { usage?: Usage } | null)?.usage ??
        (ev.payload as { usage?: Usage }).usage;
      if (usage && typeof usage.input_tokens === "number") {
        // The model gateway sees every model call of an episode (hooks'
        // transcripts miss some): where it recorded, only its count holds.
        const gateway = ev.payload.source === "model_gateway";
        const t = gateway
          ? (e.gateway ??= { input: 0, output: 0, responses: 0 })
          : (e.ep.tokens ??= { input: 0, output: 0, responses: 0 });
        t.input += usage.input_tokens;
        t.output += typeof usage.output_tokens === "number"
          ? usage.output_tokens
          : 0;
        t.responses++;
      }
    }
    if (
      (ev.kind === "tool.call.completed" || ev.kind === "tool.call.failed") &&
      ev.parent_event_id
    ) e.open.delete(ev.parent_event_id);
  }
  const episodes = [...eps.values()].map((
    { ep, counts, fid, open, gateway, partial },
  ) => ({
    ...ep,
    ...(partial && !gateway
      ? {
        tokens: {
          ...(ep.tokens ?? { input: 0, output: 0, responses: 0 }),
          partial,
        },
      }
      : {}),
    ...(gateway ? { tokens: { ...gateway, source: "model_gateway" } } : {}),
    counts_by_kind: sorted(counts),
    fidelity: fid.level,
    incomplete_calls: open.size,
  }));
  return {
    capture: store.getCapture(captureId) ?? null,
    episodes,
    counts_by_kind: sorted(total),
    fidelity: capFidelity.level,
    chain: await store.verifyCapture(captureId),
  };
}
