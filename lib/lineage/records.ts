/**
 * The compiler's in-process records: {@linkcode NormStep},
 * {@linkcode ModelDecision}, {@linkcode NormEpisode}, and the canonical
 * {@linkcode Episode} they are made from.
 *
 * @module
 */
import type { TraceEvent } from "../trace/event.ts";
import { parsePath } from "./paths.ts";

/** A captured episode: its events in sequence order, blob references resolved. */
export interface Episode {
  /** Capture id. */
  capture_id: string;
  /** Episode id. */
  episode_id: string;
  /** The events. */
  events: TraceEvent[];
  /** Digest of the evidence: sha256 over the episode's event hashes in order. */
  source_digest?: string | null;
}

/** Marker of an attributed value in symbolic arguments: `$ref(<path>)`. */
export function refMarker(path: string): string {
  return `$ref(${path})`;
}

/** Fields of a {@linkcode NormStep}. */
export interface NormStepFields {
  /** Position in the episode, from 0. */
  index: number;
  /** Logical tool id (canonical map, else the event's logical id, else the host name). */
  logical_tool: string;
  /** Host tool name. */
  host_tool: string | null;
  /** Arguments as called. */
  arguments: Record<string, unknown>;
  /**
   * Argument path → its source path, a template with `$ref(path)` markers
   * for values embedded in a string, or null (no source).
   */
  arg_lineage: Record<string, string | null>;
  /** What the tool returned. */
  result?: unknown;
  /** Whether it completed. */
  ok?: boolean;
  /** Error, when it failed. */
  error?: unknown;
  /** Store name its result is kept under. */
  store?: string | null;
  /** IR node id. */
  node_id?: string | null;
  /** The state (stores and variables) before the step. */
  state_before?: Record<string, unknown>;
}

/** One normalized action step. */
export class NormStep {
  /** Position in the episode, from 0. */
  index: number;
  /** Logical tool id. */
  logical_tool: string;
  /** Host tool name. */
  host_tool: string | null;
  /** Arguments as called. */
  arguments: Record<string, unknown>;
  /** Argument path → its source path, template, or null. */
  arg_lineage: Record<string, string | null>;
  /** What the tool returned. */
  result: unknown;
  /** Whether it completed. */
  ok: boolean;
  /** Error, when it failed. */
  error: unknown;
  /** Store name its result is kept under. */
  store: string | null;
  /** IR node id. */
  node_id: string | null;
  /** The state before the step. */
  state_before: Record<string, unknown>;

  /**
   * Create a `NormStep`.
   *
   * @param f Field values (defaults for the optional ones).
   */
  constructor(f: NormStepFields) {
    this.index = f.index;
    this.logical_tool = f.logical_tool;
    this.host_tool = f.host_tool;
    this.arguments = f.arguments;
    this.arg_lineage = f.arg_lineage;
    this.result = f.result ?? null;
    this.ok = f.ok ?? true;
    this.error = f.error ?? null;
    this.store = f.store ?? null;
    this.node_id = f.node_id ?? null;
    this.state_before = f.state_before ?? {};
  }

  /**
   * The arguments with attributed values replaced: a whole value by
   * `$ref(path)`, a string with embedded identifiers by its template.
   *
   * @returns A new arguments object.
   */
  symbolicArgs(): Record<string, unknown> {
    const out = structuredClone(this.arguments);
    for (const [argPath, source] of Object.entries(this.arg_lineage)) {
      if (source === null) continue;
      const marker = source.includes("$ref(") ? source : refMarker(source);
      setAt(out, argPath, marker);
    }
    return out;
  }

  /** Plain JSON form (the fields). */
  toJSON(): NormStepFields {
    return { ...this };
  }
}

function setAt(
  root: Record<string, unknown>,
  path: string,
  value: unknown,
): void {
  const segs = parsePath(path);
  let cur: unknown = root;
  for (let i = 0; i < segs.length - 1; i++) {
    const s = segs[i];
    cur = "key" in s
      ? (cur as Record<string, unknown>)[s.key]
      : (cur as unknown[])[(s as { index: number }).index];
  }
  const last = segs[segs.length - 1];
  if ("key" in last) (cur as Record<string, unknown>)[last.key] = value;
  else if ("index" in last) (cur as unknown[])[last.index] = value;
}

/** A decision the model made that no data determined (a residual candidate). */
export interface ModelDecision {
  /** Step index. */
  index: number;
  /** Node id of the step. */
  node_id: string | null;
  /** State keys visible before the step. */
  inputs: string[];
  /** Argument paths the model chose. */
  outputs: string[];
  /** `predict` (a typed choice) or `react` (an open tool loop). */
  kind: string;
}

/** A normalized episode. */
export interface NormEpisode {
  /** Episode id. */
  episode_id: string;
  /** Steps in order. */
  steps: NormStep[];
  /** Model decisions. */
  decisions: ModelDecision[];
  /** Recorded task outcome, or null. */
  success: boolean | null;
  /** Recorded outcome object, or null. */
  outcome: Record<string, unknown> | null;
  /** Evidence digest of the source events. */
  source_digest: string | null;
}
