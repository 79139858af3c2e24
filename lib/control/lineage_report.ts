/**
 * The exact-lineage report of a capture: per episode, each step's logical
 * tool and every argument with its exact source path or why it has none,
 * counts of attributed and unattributed identifier-like values, fidelity,
 * correlation quality, and the chain status (with head hash) of the spool
 * it was computed from. Deterministic: the same capture gives the same
 * JSON, byte for byte.
 *
 * @module
 */
import type { CaptureReader } from "../store/reader.ts";
import type { ChainReport } from "../trace/jsonl.ts";
import type { TraceEvent } from "../trace/event.ts";
import type { NormEpisode } from "../lineage/records.ts";
import { type Fidelity, FidelityTracker } from "../store/fidelity.ts";
import { loadEpisodes } from "../lineage/episodes.ts";
import { argumentLeaves, normalizeEpisode } from "../lineage/normalize.ts";
import {
  isIdentifierToken,
  isMeaningful,
  words,
} from "../lineage/meaningful.ts";
import { CaptureNotFoundError } from "../store/inspect.ts";

/** How an argument got its value. */
export type ArgumentKind =
  | "ref"
  | "template"
  | "user_input"
  | "literal"
  | "model_chosen";

/** One argument in the report. */
export interface ArgumentLineage {
  /** Argument path. */
  arg: string;
  /** The value as called. */
  value: unknown;
  /** Exact source path, template, or null. */
  source: string | null;
  /** `ref` (an earlier result), `template` (identifiers inside a string), `user_input` (the task or prompt), `literal` (not identifier-like), `model_chosen` (identifier-like, no source). */
  kind: ArgumentKind;
}

/** Counts of identifier-like values. */
export interface LineageCounts {
  /** Steps. */
  steps: number;
  /** Identifier-like values in arguments (whole values, and identifier tokens inside strings). */
  identifier_values: number;
  /** Of them, with an exact source. */
  attributed: number;
  /** Of them, without. */
  unattributed: number;
}

/** Correlation of completions with their starts. */
export type CorrelationCounts = Record<string, number>;

/** One episode in the report. */
export interface EpisodeLineage {
  /** Episode id. */
  episode_id: string;
  /** Fidelity of its events. */
  fidelity: Fidelity;
  /** Recorded outcome. */
  success: boolean | null;
  /** Recorded outcome object. */
  outcome: Record<string, unknown> | null;
  /** Evidence digest. */
  source_digest: string | null;
  /** Counts. */
  counts: LineageCounts;
  /** Correlation of its completions. */
  correlation: CorrelationCounts;
  /** Steps. */
  steps: {
    index: number;
    node_id: string | null;
    logical_tool: string;
    host_tool: string | null;
    store: string | null;
    ok: boolean;
    arguments: ArgumentLineage[];
  }[];
}

/** The report. */
export interface LineageReport {
  /** `harness.lineage.v1`. */
  schema_version: string;
  /** Capture id. */
  capture_id: string;
  /** Fidelity of the capture. */
  fidelity: Fidelity;
  /** Chain status of the spool the report rests on. */
  chain: Pick<
    ChainReport,
    "ok" | "events" | "head_sequence" | "head_hash" | "problem"
  >;
  /** Totals over episodes. */
  totals: LineageCounts & { episodes: number };
  /** Correlation over the capture. */
  correlation: CorrelationCounts;
  /** Episodes in order of first event. */
  episodes: EpisodeLineage[];
}

function kindOf(value: unknown, source: string | null): ArgumentKind {
  if (source === null) return isMeaningful(value) ? "model_chosen" : "literal";
  if (source.includes("$ref(")) return "template";
  return source === "input" || source.startsWith("input.") ||
      source.startsWith("input~")
    ? "user_input"
    : "ref";
}

function count(value: unknown, source: string | null, c: LineageCounts): void {
  if (isMeaningful(value)) {
    c.identifier_values++;
    if (source !== null) c.attributed++;
    else c.unattributed++;
    return;
  }
  if (typeof value !== "string") return;
  const tokens = words(value).filter((t) => isIdentifierToken(t.text)).length;
  const refs = source === null ? 0 : source.split("$ref(").length - 1;
  c.identifier_values += tokens;
  c.attributed += Math.min(refs, tokens);
  c.unattributed += Math.max(0, tokens - refs);
}

/**
 * Build the lineage report of a capture.
 *
 * @param store The store.
 * @param captureId The capture.
 * @param options Canonical tool map.
 * @returns The report.
 * @throws {CaptureNotFoundError} When the capture has no spool.
 */
export async function buildLineageReport(
  store: CaptureReader,
  captureId: string,
  options: { canonical?: Record<string, string> | null } = {},
): Promise<LineageReport> {
  if (!store.hasCapture(captureId)) {
    throw new CaptureNotFoundError(captureId, store.root);
  }
  const chain = await store.verifyCapture(captureId);
  const episodes = await loadEpisodes(store, captureId, {
    uptoSequence: chain.head_sequence,
  });
  const capFid = new FidelityTracker();
  const capCorr: CorrelationCounts = {};
  const totals = {
    episodes: episodes.length,
    steps: 0,
    identifier_values: 0,
    attributed: 0,
    unattributed: 0,
  };
  const out: EpisodeLineage[] = [];
  for (const ep of episodes) {
    const fid = new FidelityTracker();
    const corr: CorrelationCounts = {};
    for (const ev of ep.events) {
      fid.observe(ev);
      capFid.observe(ev);
      const c = correlationOf(ev);
      if (c !== null) {
        corr[c] = (corr[c] ?? 0) + 1;
        capCorr[c] = (capCorr[c] ?? 0) + 1;
      }
    }
    const norm = normalizeEpisode(ep, { canonical: options.canonical });
    const counts: LineageCounts = {
      steps: norm.steps.length,
      identifier_values: 0,
      attributed: 0,
      unattributed: 0,
    };
    const steps = stepsOf(norm, counts);
    totals.steps += counts.steps;
    totals.identifier_values += counts.identifier_values;
    totals.attributed += counts.attributed;
    totals.unattributed += counts.unattributed;
    out.push({
      episode_id: ep.episode_id,
      fidelity: fid.level,
      success: norm.success,
      outcome: norm.outcome,
      source_digest: norm.source_digest,
      counts,
      correlation: sortKeys(corr),
      steps,
    });
  }
  return {
    schema_version: "harness.lineage.v1",
    capture_id: captureId,
    fidelity: capFid.level,
    chain: {
      ok: chain.ok,
      events: chain.events,
      head_sequence: chain.head_sequence,
      head_hash: chain.head_hash,
      problem: chain.problem,
    },
    totals,
    correlation: sortKeys(capCorr),
    episodes: out,
  };
}

/** How a tool call's end was matched to its start, or null for other events. */
function correlationOf(ev: TraceEvent): string | null {
  if (ev.kind !== "tool.call.completed" && ev.kind !== "tool.call.failed") {
    return null;
  }
  return typeof ev.payload.correlation === "string"
    ? ev.payload.correlation
    : ev.parent_event_id
    ? "linked"
    : "none";
}

/** The report's steps of a normalized episode, tallied into `counts`. */
function stepsOf(
  norm: NormEpisode,
  counts: LineageCounts,
): EpisodeLineage["steps"] {
  return norm.steps.map((s) => ({
    index: s.index,
    node_id: s.node_id,
    logical_tool: s.logical_tool,
    host_tool: s.host_tool,
    store: s.store,
    ok: s.ok,
    arguments: argumentLeaves(s.arguments).map(({ path, value }) => {
      const source = s.arg_lineage[path] ?? null;
      count(value, source, counts);
      return { arg: path, value, source, kind: kindOf(value, source) };
    }),
  }));
}

function sortKeys(o: Record<string, number>): Record<string, number> {
  return Object.fromEntries(
    Object.entries(o).sort(([a], [b]) => a < b ? -1 : 1),
  );
}
