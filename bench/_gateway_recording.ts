/**
 * What the gateway benchmark checks of the recording: one `model.requested`
 * event per request sent through the gateway, the gateway's own counts,
 * the processes' memory, the episodes and the largest conversation body.
 *
 * @module
 */
import { HarnessStore } from "../lib/store/mod.ts";
import type { BenchRow } from "./_table.ts";
import { TURNS } from "./_gateway_cells.ts";
import type { Route } from "./_gateway_measure.ts";

/** Event counts by kind over every capture of a store. */
function countKinds(root: string): Record<string, number> {
  const store = new HarnessStore(root, { readOnly: true });
  try {
    const out: Record<string, number> = {};
    for (const id of store.captureIds()) {
      for (const [kind, n] of Object.entries(store.countsByKind(id))) {
        out[kind] = (out[kind] ?? 0) + n;
      }
    }
    return out;
  } finally {
    store.close();
  }
}

/** What a gateway process printed when it stopped. */
export interface GatewayStats {
  /** Requests recorded. */
  recorded: number;
  /** Requests not recorded. */
  record_misses: number;
  /** Requests the upstream failed. */
  upstream_errors: number;
  /** Why the last one was not recorded. */
  last_miss: string | null;
  /** The listener's connection counts (`/health`'s `stats.connections`). */
  connections?: { accepted: number; evicted: number; refused: number };
}

/** Options of {@linkcode recordingRows}. */
export interface RecordingRowsOptions {
  /** The gateway's route (what it sent). */
  gateway: Route;
  /** What the gateway printed when it stopped, if anything. */
  stats: GatewayStats | null | undefined;
  /** RSS of each process in between, one text each. */
  rss: string[];
  /** Sizes of the conversations' last request bodies. */
  lastTurnBytes: number[];
}

/**
 * The recording table's rows.
 *
 * @param store The gateway's store.
 * @param options What was sent, the stats, memory, body sizes.
 * @returns The rows, the event count against its target.
 */
export function recordingRows(
  store: string,
  options: RecordingRowsOptions,
): BenchRow[] {
  const kinds = countKinds(store);
  const requested = kinds["model.requested"] ?? 0;
  const s = options.stats;
  return [
    {
      name: "requests sent through the gateway (warm-ups included)",
      value: options.gateway.sent.toLocaleString("en-US"),
    },
    {
      name: "model.requested events in the store",
      value: requested.toLocaleString("en-US"),
      target: "one per request",
      met: requested === options.gateway.sent ? "yes" : "no",
    },
    {
      name: "gateway stats: recorded / record misses / upstream errors",
      value: s
        ? `${s.recorded} / ${s.record_misses} / ${s.upstream_errors}${
          s.last_miss ? ` (last miss: ${s.last_miss})` : ""
        }`
        : "(none: the gateway process printed no stats)",
    },
    {
      // At the cap an idle connection is closed for a new one, and a client
      // sending on it that moment has its request cut.
      name:
        "gateway listener: connections accepted / closed at the cap / refused",
      value: s?.connections
        ? `${s.connections.accepted} / ${s.connections.evicted} / ${s.connections.refused}`
        : "-",
      target: "none closed or refused",
      met: s?.connections
        ? s.connections.evicted === 0 && s.connections.refused === 0
          ? "yes"
          : "no"
        : "-",
    },
    {
      name: "RSS of the processes in between at the end (MB)",
      value: options.rss.join(" | ") || "-",
    },
    {
      name: "episodes recorded (episode.started)",
      value: `${(kinds["episode.started"] ?? 0).toLocaleString("en-US")} (${
        options.gateway.conversations.toLocaleString("en-US")
      } conversations sent, no x-harness-episode)`,
    },
    {
      name: `conversation request body at turn ${TURNS}`,
      value: options.lastTurnBytes.length
        ? `${(Math.max(...options.lastTurnBytes) / 1024).toFixed(1)} KB`
        : "-",
    },
  ];
}
