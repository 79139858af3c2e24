/**
 * Tool effects known without a flag: which tools only read (and may become
 * prefetched `lookup` nodes) and which change state. `resolveEffects` reads
 * what a capture knows, in this order of trust:
 *
 * 1. `override` (`compile.ts --effects FILE`), per tool;
 * 2. MCP tool annotations recorded by the proxy (`toolset.exposed`);
 * 3. tool definitions that came with an imported file (`schema`), then a
 *    benchmark's declared tool types for the file's domain (`domain`);
 * 4. the host's built-in tools (`host`, by the events' `source.host`);
 * 5. a guess from the name, read-only verbs only (`inferred`);
 * 6. otherwise `unknown`: counted as `write` (state-changing, never safe).
 *
 * Annotations map as MCP says: `readOnlyHint` true → `read`;
 * `destructiveHint` false → `write`; otherwise `destructive`. Where one
 * source says different things about a tool (two hosts, two toolsets), the
 * more state-changing answer wins.
 *
 * @module
 */
import type { Episode } from "../lineage/records.ts";
import type { TraceEvent } from "../trace/event.ts";
import type {
  ExposedTool,
  ToolsetExposedPayload,
} from "../trace/tool_events.ts";
import {
  EFFECT_SOURCES,
  type Effects,
  type EffectSource,
} from "../package/tool_effects.ts";
import { hostToolEffect } from "./host_tools.ts";

/** What {@linkcode resolveEffects} returns. */
export interface EffectsResolution {
  /** Tool → `read` | `write` | `destructive` (override's tools first, then by name). */
  effects: Effects;
  /** Tool → where its effect came from. */
  source: Record<string, EffectSource>;
  /** Tools nothing said anything about (counted as `write`), by name. */
  unknown: string[];
  /** Tools guessed read-only from their names, by name. */
  inferred: string[];
  /** Recorded calls of each unknown tool: calls that could not become lookups. */
  unknown_calls: Record<string, number>;
}

/** Options of {@linkcode resolveEffects}. */
export interface ResolveEffectsOptions {
  /** Tool → effect that wins over everything the capture says (tools it does not name still resolve). */
  override?: Effects | null;
  /** Host tool → logical id, as given to normalization (effects are keyed by logical tool). */
  canonical?: Record<string, string> | null;
}

const RANK: Record<string, number> = { read: 0, write: 1, destructive: 2 };

function moreCautious(a: string | undefined, b: string): string {
  return a === undefined || (RANK[b] ?? 1) > (RANK[a] ?? 1) ? b : a;
}

/**
 * The effect MCP tool annotations declare.
 *
 * @param annotations A tool's annotations.
 * @returns `read` when `readOnlyHint` is true, `write` when `destructiveHint`
 *   is false, else `destructive` (MCP's default); null when neither hint is given.
 */
export function effectFromAnnotations(
  annotations: ExposedTool["annotations"] | null | undefined,
): string | null {
  if (!annotations) return null;
  const { readOnlyHint, destructiveHint } = annotations;
  if (readOnlyHint === undefined && destructiveHint === undefined) return null;
  if (readOnlyHint === true) return "read";
  if (destructiveHint === false) return "write";
  return "destructive";
}

const READ_VERB =
  /^(get|find|list|search|read|fetch|lookup|query|check|show|view|describe|count)(?:[-_.A-Z0-9]|$)/;
const READ_NAMES = new Set(["calculate", "think"]);

/**
 * Whether a tool's name says it only reads: its last part (after `/`, `:`
 * or `__`) starts with a looking-up verb (`get`, `find`, `list`, `search`,
 * `read`, `fetch`, `lookup`, `query`, `check`, `show`, `view`, `describe`,
 * `count`) followed by a separator, a capital or nothing, or is `calculate`
 * or `think`. Never a guess for anything else.
 *
 * @param tool Logical tool name.
 * @returns True when the name reads as a lookup.
 */
export function looksReadOnly(tool: string): boolean {
  const base = tool.split(/\/|:|__/).pop() ?? tool;
  const lower = base.charAt(0).toLowerCase() + base.slice(1);
  return READ_NAMES.has(lower) || READ_VERB.test(lower);
}

function toolsetSource(ev: TraceEvent): EffectSource {
  if (!ev.source.adapter.startsWith("import-")) return "annotation";
  const origin = String(ev.payload.origin ?? "");
  return origin.startsWith("domain:") ? "domain" : "schema";
}

// One pass over the events gathers what each source says; the trust order is applied right after it.
/**
 * The effects of every tool the episodes call or expose, with where each
 * came from.
 *
 * @param episodes Captured episodes (their `toolset.exposed` events and calls).
 * @param options The override and the canonical tool map.
 * @returns The effects, their sources, and the unknown and inferred tools.
 * @throws {TypeError} When the override gives an effect other than `read`, `write` or `destructive`.
 */
export function resolveEffects(
  episodes: Episode[],
  options: ResolveEffectsOptions = {},
): EffectsResolution {
  const override = options.override ?? {};
  const canonical = options.canonical ?? {};
  const said = new Map<string, Map<EffectSource, string>>();
  const calls = new Map<string, number>();
  const seen = new Set<string>();
  const note = (tool: string, source: EffectSource, effect: string) => {
    const bySource = said.get(tool) ?? new Map<EffectSource, string>();
    bySource.set(source, moreCautious(bySource.get(source), effect));
    said.set(tool, bySource);
  };
  for (const ep of episodes) {
    const started = new Set<string>();
    for (const ev of ep.events) {
      if (ev.kind === "toolset.exposed") {
        const source = toolsetSource(ev);
        const tools = (ev.payload as ToolsetExposedPayload).tools;
        for (const t of Array.isArray(tools) ? tools : []) {
          if (!t || typeof t.name !== "string") continue;
          const logical = canonical[t.name] ?? t.logical_id ?? t.name;
          seen.add(logical);
          const effect = effectFromAnnotations(t.annotations);
          if (effect) note(logical, source, effect);
        }
        continue;
      }
      const isStart = ev.kind === "tool.call.started";
      const isEnd = ev.kind === "tool.call.completed" ||
        ev.kind === "tool.call.failed";
      if (!isStart && !(isEnd && !started.has(ev.parent_event_id ?? ""))) {
        continue;
      }
      if (isStart) started.add(ev.event_id);
      const tool = ev.payload.tool as
        | { host_name?: string; logical_id?: string | null }
        | undefined;
      if (!tool || typeof tool.host_name !== "string") continue;
      const logical = canonical[tool.host_name] ?? tool.logical_id ??
        tool.host_name;
      seen.add(logical);
      calls.set(logical, (calls.get(logical) ?? 0) + 1);
      const host = hostToolEffect(ev.source.host, tool.host_name);
      if (host) note(logical, "host", host);
    }
  }
  const out: EffectsResolution = {
    effects: {},
    source: {},
    unknown: [],
    inferred: [],
    unknown_calls: {},
  };
  for (const [tool, effect] of Object.entries(override)) {
    if (!Object.hasOwn(RANK, effect)) {
      throw new TypeError(
        `The effect of "${tool}" is ${
          JSON.stringify(effect)
        }: give "read", "write" or "destructive"`,
      );
    }
    out.effects[tool] = effect;
    out.source[tool] = "override";
  }
  for (const tool of [...seen].sort()) {
    if (Object.hasOwn(override, tool)) continue;
    const bySource = said.get(tool);
    const source = EFFECT_SOURCES.find((s) => bySource?.has(s));
    if (source) {
      out.effects[tool] = bySource!.get(source)!;
      out.source[tool] = source;
    } else if (looksReadOnly(tool)) {
      out.effects[tool] = "read";
      out.source[tool] = "inferred";
      out.inferred.push(tool);
    } else {
      out.effects[tool] = "write";
      out.source[tool] = "unknown";
      out.unknown.push(tool);
      out.unknown_calls[tool] = calls.get(tool) ?? 0;
    }
  }
  return out;
}

const SOURCE_WORDS: Record<EffectSource, string> = {
  override: "given (--effects)",
  annotation: "from MCP tool annotations",
  schema: "from the imported tool definitions",
  domain: "from the benchmark's declared tool types",
  host: "host built-ins",
  inferred: "guessed read-only from their names",
  unknown: "unknown",
};

/**
 * Lines a CLI prints about a resolution: how many tools from which source,
 * the unknown tools and what they cost, and the inferred ones.
 *
 * @param resolution What {@linkcode resolveEffects} returned.
 * @returns Lines of text (no trailing newlines).
 */
export function describeEffects(resolution: EffectsResolution): string[] {
  const tools = Object.keys(resolution.source);
  const bySource = EFFECT_SOURCES.map((s) =>
    [s, tools.filter((t) => resolution.source[t] === s).length] as const
  ).filter(([, n]) => n > 0);
  const lines = [
    `effects of ${tools.length} tool${tools.length === 1 ? "" : "s"}${
      bySource.length ? ": " : ""
    }${bySource.map(([s, n]) => `${n} ${SOURCE_WORDS[s]}`).join(", ")}`,
  ];
  if (resolution.unknown.length) {
    const calls = resolution.unknown.reduce(
      (sum, t) => sum + (resolution.unknown_calls[t] ?? 0),
      0,
    );
    lines.push(
      `unknown effects (counted as state-changing): ${
        resolution.unknown.map((t) => {
          const n = resolution.unknown_calls[t] ?? 0;
          return `${t} (${n} call${n === 1 ? "" : "s"})`;
        }).join(", ")
      }`,
      `${calls} recorded call${
        calls === 1 ? "" : "s"
      } could not become lookups; pass --effects FILE to say which only read`,
    );
  }
  if (resolution.inferred.length) {
    lines.push(
      `read-only by name only (effects_source "inferred"): ${
        resolution.inferred.join(", ")
      }; pass --effects FILE if any of them changes state`,
    );
  }
  return lines;
}
