/**
 * Gather what the HTML report of a capture shows from the store: the chain
 * status, and per episode the tool calls (timing, status, parent), the
 * model turns with tokens, the exact-lineage edges (which earlier result,
 * at which path, fed which argument) and what a served package did. The record itself is in
 * `capture_report_types.ts`.
 *
 * @module
 */
import type { CaptureReader } from "../store/reader.ts";
import type { TraceEvent } from "../trace/event.ts";
import { canonicalJson } from "../trace/canonical_json.ts";
import { completionsByStart } from "../trace/completions.ts";
import { loadEpisodes } from "../lineage/episodes.ts";
import {
  buildLineageReport,
  type EpisodeLineage,
} from "../control/lineage_report.ts";
import {
  packageActivity,
  packageTotals,
  type TokensSaved,
  tokensSavedText,
} from "../control/package_activity.ts";
import type {
  CaptureReportData,
  ReportCall,
  ReportEdge,
  ReportEpisode,
  ReportFigures,
} from "./capture_report_types.ts";

function clip(v: unknown, max = 600): string {
  const t = typeof v === "string" ? v : canonicalJson(v ?? null);
  return t.length > max ? t.slice(0, max) + "…" : t;
}

const REFUSAL = /refus|denied|deny|guard|blocked|forbidden|policy/i;

function callsOf(events: TraceEvent[], t0: number): ReportCall[] {
  const ends = completionsByStart(events);
  const calls: ReportCall[] = [];
  const indexOf = new Map<string, number>();
  for (const ev of events) {
    if (ev.kind !== "tool.call.started") continue;
    const p = ev.payload as Record<string, unknown>;
    const end = ends.get(ev.event_id);
    const ep = (end?.payload ?? {}) as Record<string, unknown>;
    const start = Date.parse(ev.timestamp);
    const error = clip(ep.error ?? null);
    const outcome = (ep.error as { outcome?: unknown } | undefined)?.outcome;
    indexOf.set(ev.event_id, calls.length);
    calls.push({
      index: calls.length,
      sequence: ev.sequence,
      event_id: ev.event_id,
      name: (p.tool as { host_name?: string })?.host_name ?? "?",
      start_ms: start - t0,
      duration_ms: end ? Math.max(0, Date.parse(end.timestamp) - start) : 0,
      status: !end
        ? "pending"
        : end.kind === "tool.call.completed"
        ? "ok"
        : outcome === "refused" || outcome === "failed"
        ? outcome
        : REFUSAL.test(error)
        ? "refused"
        : "failed",
      parent: ev.parent_event_id
        ? indexOf.get(ev.parent_event_id) ?? null
        : null,
      args: clip(p.arguments ?? {}, 4000),
      result: end?.kind === "tool.call.failed"
        ? clip(ep.error ?? null, 4000)
        : clip(ep.result, 4000),
    });
  }
  return calls;
}

/**
 * Gather a capture's report.
 *
 * @param store The store.
 * @param captureId The capture.
 * @returns The report's data.
 * @throws {CaptureNotFoundError} When there is no such capture.
 */
export async function captureReportData(
  store: CaptureReader,
  captureId: string,
): Promise<CaptureReportData> {
  const lineage = await buildLineageReport(store, captureId);
  // Every episode is shown; those with events past a chain break are
  // marked (their lineage is not computed: it would rest on unverified events).
  const head = lineage.chain.head_sequence;
  let loaded;
  try {
    loaded = lineage.chain.ok
      ? await loadEpisodes(store, captureId, { uptoSequence: head })
      : await loadEpisodes(store, captureId);
  } catch {
    loaded = await loadEpisodes(store, captureId, { uptoSequence: head });
  }
  const byId = new Map(lineage.episodes.map((e) => [e.episode_id, e]));
  const episodes = loaded.map((ep): ReportEpisode => {
    const t0 = Date.parse(ep.events[0].timestamp);
    const last = Date.parse(ep.events[ep.events.length - 1].timestamp);
    const { turns, tokens } = turnsOf(ep.events, t0);
    const lin = byId.get(ep.episode_id);
    const talk = conversationOf(ep.events, t0);
    const edges = edgesOf(lin?.steps ?? []);
    return {
      episode_id: ep.episode_id,
      success: lin?.success ?? null,
      events: ep.events.length,
      duration_ms: last - t0,
      tokens,
      turns,
      calls: callsOf(ep.events, t0),
      steps: (lin?.steps ?? []).map((s) => ({
        index: s.index,
        tool: s.host_tool ?? s.logical_tool,
        args: s.arguments.map((a) => ({
          arg: a.arg,
          value: clip(a.value, 200),
          source: a.source,
          kind: a.kind,
        })),
      })),
      edges,
      ...talk,
      started_at: ep.events[0].timestamp,
      after_break: !lineage.chain.ok &&
        ep.events.some((ev) => ev.sequence > head),
      package: withTokensText(packageActivity(ep.events)),
    };
  });
  const p = lineage.chain.problem;
  return {
    schema_version: "harness.report.v1",
    capture_id: captureId,
    chain: {
      ok: lineage.chain.ok,
      events: lineage.chain.events,
      head_sequence: lineage.chain.head_sequence,
      head_hash: lineage.chain.head_hash,
      problem: p
        ? { line: p.line, sequence: p.sequence, message: p.message }
        : null,
    },
    totals: {
      steps: lineage.totals.steps,
      identifier_values: lineage.totals.identifier_values,
      attributed: lineage.totals.attributed,
      episodes: lineage.totals.episodes,
    },
    episodes,
    figures: figuresOf(episodes),
  };
}

/** The model turns of an episode's events, and their token totals. */
function turnsOf(
  events: TraceEvent[],
  t0: number,
): Pick<ReportEpisode, "turns" | "tokens"> {
  const turns: ReportEpisode["turns"] = [];
  let input = 0;
  let output = 0;
  let anyTokens = false;
  const partial = events.some((ev) =>
    ev.kind === "annotation" && ev.payload.type === "usage.partial"
  );
  // The model gateway sees every model call: where it recorded, its turns
  // alone are counted (the hooks' would count them twice).
  const gateway = events.some((ev) =>
    ev.kind === "model.responded" && ev.payload.source === "model_gateway"
  );
  for (const ev of events) {
    if (ev.kind !== "model.responded") continue;
    if (gateway && ev.payload.source !== "model_gateway") continue;
    const r = (ev.payload.response ?? {}) as {
      model?: string | null;
      usage?: { input_tokens?: number | null; output_tokens?: number | null };
    };
    const i = r.usage?.input_tokens;
    const o = r.usage?.output_tokens;
    if (typeof i === "number" || typeof o === "number") anyTokens = true;
    input += typeof i === "number" ? i : 0;
    output += typeof o === "number" ? o : 0;
    turns.push({
      start_ms: Date.parse(ev.timestamp) - t0,
      model: r.model ?? ev.source.model ?? null,
      tokens: typeof i === "number" || typeof o === "number"
        ? (i ?? 0) + (o ?? 0)
        : null,
      // An answer a package made: no model call.
      ...(typeof ev.payload.served_by === "string"
        ? { served: true as const }
        : {}),
    });
  }
  const counted = partial && !gateway;
  return {
    turns,
    tokens: anyTokens || counted
      ? { input, output, ...(counted ? { partial: true as const } : {}) }
      : null,
  };
}

/** The exact-lineage edges among an episode's steps. */
function edgesOf(steps: EpisodeLineage["steps"]): ReportEdge[] {
  const stores = new Map<string, number>();
  for (const s of steps) if (s.store) stores.set(s.store, s.index);
  const edges: ReportEdge[] = [];
  for (const s of steps) {
    for (const a of s.arguments) {
      if (!a.source) continue;
      const refs = a.kind === "template"
        ? [...a.source.matchAll(/\$ref\(([^)]+)\)/g)].map((m) => m[1])
        : a.kind === "ref"
        ? [a.source]
        : [];
      for (const ref of refs) {
        const dot = ref.indexOf(".");
        const from = stores.get(dot < 0 ? ref : ref.slice(0, dot));
        if (from === undefined) continue;
        edges.push({
          from,
          path: dot < 0 ? "" : ref.slice(dot + 1),
          to: s.index,
          arg: a.arg,
        });
      }
    }
  }
  return edges;
}

/** Messages, working directory and outcome reason of an episode's events. */
function conversationOf(events: TraceEvent[], t0: number) {
  const messages: ReportEpisode["messages"] = [];
  let cwd: string | null = null;
  let reason: string | null = null;
  for (const ev of events) {
    const p = ev.payload as Record<string, unknown>;
    if (ev.kind === "message" && typeof p.text === "string") {
      messages.push({
        role: String(p.role ?? "?"),
        text: clip(p.text, 8000),
        start_ms: Date.parse(ev.timestamp) - t0,
      });
    } else if (ev.kind === "episode.started" && typeof p.cwd === "string") {
      cwd ??= p.cwd;
    } else if (ev.kind === "episode.outcome" || p.type === "episode.outcome") {
      const o = (p.outcome ?? {}) as Record<string, unknown>;
      // No reason recorded: none shown (not "null").
      const why = o.reason ?? o.note ?? p.reason;
      const parts = [why, o.error].filter((v) => v !== undefined && v !== null)
        .map((v) => clip(v, 400));
      reason = parts.length ? parts.join(": ") : null;
    } else if (ev.kind === "episode.finished" && reason === null) {
      if (typeof p.reason === "string") reason = `finished: ${p.reason}`;
    }
  }
  return { messages, cwd, outcome_reason: reason };
}

/** Capture-wide figures over the episodes. */
function figuresOf(episodes: ReportEpisode[]): ReportFigures {
  const tools = new Map<string, ReportFigures["tools"][number]>();
  let input = 0, output = 0, turns = 0, served = 0, partial = false;
  for (const e of episodes) {
    input += e.tokens?.input ?? 0;
    output += e.tokens?.output ?? 0;
    if (e.tokens?.partial) partial = true;
    turns += e.turns.length;
    served += e.turns.filter((t) => t.served).length;
    for (const c of e.calls) {
      let t = tools.get(c.name);
      if (!t) {
        tools.set(
          c.name,
          t = { name: c.name, calls: 0, failed: 0, refused: 0 },
        );
      }
      t.calls++;
      if (c.status === "failed") t.failed++;
      if (c.status === "refused") t.refused++;
    }
  }
  const d = episodes.map((e) => e.duration_ms).sort((a, b) => a - b);
  const times = episodes.map((e) => e.started_at).sort();
  const lasts = episodes.map((e) => Date.parse(e.started_at) + e.duration_ms);
  return {
    tools: [...tools.values()].sort((a, b) => b.calls - a.calls),
    tokens: { input, output, ...(partial ? { partial: true as const } : {}) },
    turns,
    served_turns: served,
    first_at: times[0] ?? null,
    last_at: lasts.length ? new Date(Math.max(...lasts)).toISOString() : null,
    duration_ms: { median: d[d.length >> 1] ?? 0, max: d.at(-1) ?? 0 },
    package: withTokensText(packageTotals(episodes.map((e) => e.package))),
  };
}

/** An activity record with its tokens-saved estimate in words. */
function withTokensText<T extends { tokens_saved: TokensSaved }>(
  a: T | null,
): (T & { tokens_text: string }) | null {
  return a ? { ...a, tokens_text: tokensSavedText(a.tokens_saved) } : null;
}
