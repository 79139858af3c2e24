/**
 * Normalization: an {@linkcode Episode} becomes ordered
 * action steps whose arguments are annotated with exact lineage against the
 * state before each step: the task input (`input`: the first user message
 * as `input.text`, every user message so far as `input.user[k]` and the
 * newest as `input.latest`, the episode's task as `input.task`, its working
 * directory as `input.cwd`) and every
 * earlier successful step's result under its store name. No model is used.
 * User-side tool calls (dual control, `actor: "user"`) are not steps; what
 * they showed counts among the user messages.
 *
 * @module
 */
import type { TraceEvent } from "../trace/event.ts";
import { sha256Digest } from "../trace/hash.ts";
import { isMeaningful, subTokens, tokenize, words } from "./meaningful.ts";
import { formatPath, type PathSegment } from "./paths.ts";
import { StateIndex } from "./state_index.ts";
import {
  type Episode,
  type ModelDecision,
  type NormEpisode,
  NormStep,
} from "./records.ts";
import { DEFAULT_MAX_DEPTH } from "./find_source.ts";
import { argLineage } from "./arg_lineage.ts";

/** Options of {@linkcode normalizeEpisode}. */
export interface NormalizeOptions {
  /** Host tool name → logical id; unmapped tools keep their name. */
  canonical?: Record<string, string> | null;
  /**
   * Lineage search depth.
   * @default 6
   */
  maxDepth?: number;
}

function safe(name: string): string {
  return name.replace(/[^A-Za-z0-9_]/g, "_").replace(/^(\d)/, "_$1");
}

/**
 * Store name of a step's result, shared by normalizer, staticizer and
 * verifier so refs agree.
 *
 * @param tool Logical tool id.
 * @param index Step index.
 * @returns `<tool>_<index>` with non-identifier characters as `_`.
 */
export function synthStore(tool: string, index: number): string {
  return `${safe(tool)}_${index}`;
}

/**
 * Node id of a step.
 *
 * @param tool Logical tool id.
 * @param index Step index.
 * @returns `n<index>_<tool>`.
 */
export function synthNodeId(tool: string, index: number): string {
  return `n${index}_${safe(tool)}`;
}

/** Leaves of an arguments object with their paths. */
export function argumentLeaves(
  args: Record<string, unknown>,
): { path: string; value: unknown }[] {
  const out: { path: string; value: unknown }[] = [];
  const visit = (v: unknown, segs: PathSegment[]) => {
    if (typeof v === "object" && v !== null) {
      if (Array.isArray(v)) {
        v.forEach((x, i) => visit(x, [...segs, { index: i }]));
      } else {
        for (const [k, x] of Object.entries(v)) visit(x, [...segs, { key: k }]);
      }
      return;
    }
    if (segs.length) out.push({ path: formatPath(segs), value: v });
  };
  visit(args, []);
  return out;
}

/** Every value lineage may look up for this episode's arguments. */
function wantedValues(events: TraceEvent[]): Set<string | number> {
  const wanted = new Set<string | number>();
  for (const ev of events) {
    if (
      (ev.kind !== "tool.call.started" && ev.kind !== "tool.call.completed" &&
        ev.kind !== "tool.call.failed") || isUserSideCall(ev)
    ) continue;
    const args = ev.payload.arguments as Record<string, unknown> | undefined;
    if (!args) continue;
    for (const { value } of argumentLeaves(args)) {
      if (typeof value === "number") {
        wanted.add(value);
        wanted.add(String(value));
      }
      if (typeof value !== "string") continue;
      wanted.add(value);
      for (
        const t of [...words(value), ...tokenize(value), ...subTokens(value)]
      ) {
        wanted.add(t.text);
        if (/^-?\d+(\.\d+)?$/.test(t.text)) wanted.add(Number(t.text));
      }
    }
  }
  return wanted;
}

/**
 * Whether an event is part of a user-side tool call (dual control: the
 * user's own device, `actor: "user"`): never a step of the agent.
 *
 * @param ev An event.
 * @returns True for a user-side `tool.call.*` event.
 */
export function isUserSideCall(ev: TraceEvent): boolean {
  return ev.actor === "user" && ev.kind.startsWith("tool.call.");
}

/**
 * What a user-side tool call showed the user, as text: the result's own
 * text (`result_text`, or the result when it is a string, else its JSON);
 * null for anything else.
 *
 * @param ev An event.
 * @returns The text, or null.
 */
export function userSideText(ev: TraceEvent): string | null {
  if (!isUserSideCall(ev) || ev.kind !== "tool.call.completed") return null;
  const p = ev.payload;
  if (typeof p.result_text === "string") return p.result_text;
  if (typeof p.result === "string") return p.result;
  return p.result === undefined ? null : JSON.stringify(p.result);
}

interface Call {
  start: TraceEvent | null;
  end: TraceEvent | null;
}

function pairCalls(events: TraceEvent[]): Call[] {
  const calls: Call[] = [];
  const byStart = new Map<string, Call>();
  for (const ev of events) {
    if (isUserSideCall(ev)) continue;
    if (ev.kind === "tool.call.started") {
      const c = { start: ev, end: null };
      calls.push(c);
      byStart.set(ev.event_id, c);
    } else if (
      ev.kind === "tool.call.completed" || ev.kind === "tool.call.failed"
    ) {
      const c = ev.parent_event_id
        ? byStart.get(ev.parent_event_id)
        : undefined;
      if (c && !c.end) c.end = ev;
      else calls.push({ start: null, end: ev });
    }
  }
  return calls;
}

/**
 * Normalize one episode.
 *
 * @param episode The captured episode.
 * @param options Canonical tool map, search depth.
 * @returns The normalized episode.
 */
export function normalizeEpisode(
  episode: Episode,
  options: NormalizeOptions = {},
): NormEpisode {
  const canonical = options.canonical ?? {};
  const index = new StateIndex({
    maxDepth: options.maxDepth ?? DEFAULT_MAX_DEPTH,
    wanted: wantedValues(episode.events),
  });
  const { input, success, outcome } = episodeFacts(episode.events);
  if (Object.keys(input).length) index.add("input", input);
  // Every user message, bound in order as `input.user[k]` before the first
  // call that follows it (`input.latest` is the newest). What a user-side
  // call showed on the user's own device (dual control) is something the
  // user provided too: it is bound the same way, in its place.
  const position = new Map(episode.events.map((e, i) => [e.event_id, i]));
  const userMessages = userMessagesOf(episode.events);
  let bound = 0;
  const bindUserMessagesBefore = (at: number) => {
    while (bound < userMessages.length && userMessages[bound].at < at) {
      index.addUserMessage("input", bound, userMessages[bound].text);
      bound++;
    }
  };
  const steps: NormStep[] = [];
  const decisions: ModelDecision[] = [];
  for (const call of pairCalls(episode.events)) {
    const head = (call.start ?? call.end)!;
    bindUserMessagesBefore(position.get(head.event_id) ?? Infinity);
    const tool = head.payload.tool as {
      host_name: string;
      logical_id: string | null;
    };
    const logical = canonical[tool.host_name] ?? tool.logical_id ??
      tool.host_name;
    const i = steps.length;
    const args = (head.payload.arguments ?? {}) as Record<string, unknown>;
    const { lineage, chosen } = lineageOfArgs(args, index);
    const ok = call.end?.kind === "tool.call.completed";
    const store = synthStore(logical, i);
    const nodeId = synthNodeId(logical, i);
    const step = new NormStep({
      index: i,
      logical_tool: logical,
      host_tool: tool.host_name,
      arguments: args,
      arg_lineage: lineage,
      result: call.end?.payload.result ?? null,
      ok,
      error: ok ? null : call.end?.payload.error ??
        { type: "incomplete", message: "The call never completed" },
      store,
      node_id: nodeId,
      state_before: { ...index.state },
    });
    steps.push(step);
    if (chosen.length) {
      decisions.push({
        index: i,
        node_id: nodeId,
        inputs: Object.keys(step.state_before).sort(),
        outputs: chosen,
        kind: "predict",
      });
    }
    if (ok) index.add(store, step.result);
  }
  return {
    episode_id: episode.episode_id,
    steps,
    decisions,
    success,
    outcome,
    source_digest: episode.source_digest ??
      sha256Digest(episode.events.map((e) => e.event_hash).join("\n")),
  };
}

/** The task input, success and outcome an episode's events state. */
function episodeFacts(events: TraceEvent[]): {
  input: Record<string, unknown>;
  success: boolean | null;
  outcome: Record<string, unknown> | null;
} {
  const input: Record<string, unknown> = {};
  let success: boolean | null = null;
  let outcome: Record<string, unknown> | null = null;
  for (const ev of events) {
    if (
      ev.kind === "message" && ev.payload.role === "user" &&
      input.text === undefined
    ) {
      input.text = ev.payload.text;
    }
    if (ev.kind === "episode.started" && ev.payload.task !== undefined) {
      input.task = ev.payload.task;
    }
    if (
      ev.kind === "episode.started" && typeof ev.payload.cwd === "string" &&
      input.cwd === undefined
    ) {
      input.cwd = ev.payload.cwd;
    }
    if (ev.kind === "annotation" && ev.payload.type === "episode.outcome") {
      success = typeof ev.payload.success === "boolean"
        ? ev.payload.success
        : null;
      outcome = (ev.payload.outcome as Record<string, unknown>) ?? null;
    }
  }
  return { input, success, outcome };
}

/** The user's messages (and user-side call results), with their positions. */
function userMessagesOf(events: TraceEvent[]): { at: number; text: string }[] {
  return events.flatMap((e, i) => {
    const text = e.kind === "message" && e.payload.role === "user" &&
        typeof e.payload.text === "string"
      ? e.payload.text
      : userSideText(e);
    return text === null ? [] : [{ at: i, text }];
  });
}

/** Where each argument leaf came from, and the meaningful ones nothing explains. */
function lineageOfArgs(
  args: Record<string, unknown>,
  index: StateIndex,
): { lineage: Record<string, string | null>; chosen: string[] } {
  const lineage: Record<string, string | null> = {};
  const chosen: string[] = [];
  for (const { path, value } of argumentLeaves(args)) {
    const l = argLineage(value, index);
    lineage[path] = l;
    if (l === null && isMeaningful(value)) chosen.push(path);
  }
  return { lineage, chosen };
}

/**
 * Normalize several episodes.
 *
 * @param episodes The episodes.
 * @param options Canonical tool map, search depth.
 * @returns Normalized episodes in the same order.
 */
export function normalizeAll(
  episodes: Episode[],
  options: NormalizeOptions = {},
): NormEpisode[] {
  return episodes.map((e) => normalizeEpisode(e, options));
}
