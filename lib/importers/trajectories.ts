/**
 * Importers: existing agent trajectories (OpenAI-style chat messages,
 * τ-bench v1, τ²-bench) become canonical captures, one episode per
 * trajectory. Conversion is pure and complete before anything is written:
 * a bad file is a clear error naming the position, and nothing is left
 * half-imported.
 *
 * Per episode: `episode.started` (task id, trial, and provenance: the file's
 * digest and the trajectory's position), user and assistant `message`s,
 * `tool.call.started` per tool call (`host_call_id` = the call id) and
 * `tool.call.completed` per tool answer (the result parsed when it is JSON,
 * the raw text kept in `result_text`), the reward as
 * `annotation episode.outcome` (`success` = reward ≥ 1), `episode.finished`.
 * When the file says what tools the agent had (an OpenAI-style `tools` list,
 * τ²'s `tool_defs`, or a τ² domain whose declared tool types we know), each
 * episode gets a `toolset.exposed` right after `episode.started`, with the
 * tools' effects as MCP annotations (see `tool_defs.ts`).
 *
 * Dual control (τ² telecom): the user has tools too (their own device).
 * A call on a user message (τ²'s `requestor: "user"`) and its result are
 * tool events with `actor: "user"`; normalization never makes them steps
 * (the package never calls them) and binds what the device showed as
 * something the user provided. A user-side call without its result, or a
 * result naming a call of the other party, is an {@linkcode ImportError}
 * (see `_calls.ts`). `--tools` restricts the agent's calls only.
 *
 * @module
 */
import type { UnsealedEvent } from "../trace/event.ts";
import {
  annotation,
  episodeFinished,
  episodeStarted,
  message,
} from "../trace/episode_events.ts";
import type { EventContext } from "../trace/events.ts";
import {
  toolCallCompleted,
  toolCallFailed,
  toolCallStarted,
  toolsetExposed,
  type ToolsetExposedPayload,
} from "../trace/tool_events.ts";
import { sha256Digest } from "../trace/hash.ts";
import { MAX_ID_LENGTH } from "../trace/ids.ts";
import { openaiToolset, tau2Toolset } from "./tool_defs.ts";
import { CallLedger, parseCall, type Party, requestorOf } from "./_calls.ts";
import { ImportError } from "./import_error.ts";
import { assertSealable } from "./sealable.ts";

export { ImportError };

/** Supported formats. */
export const IMPORT_FORMATS = ["openai-messages", "tau-bench", "tau2"] as const;

/** A supported format. */
export type ImportFormat = typeof IMPORT_FORMATS[number];

/** One trajectory, normalized across formats. */
interface Trajectory {
  task_id: string;
  trial: number;
  reward: number | null;
  messages: unknown[];
  /** How tool calls are written: `openai` (function.name, arguments as JSON text) or `tau2` (name, arguments object). */
  style: "openai" | "tau2";
  /** The tools the file says the agent had, or null. */
  toolset: ToolsetExposedPayload | null;
  /** τ²'s simulation id, when the file gives one. */
  simulation?: string;
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function trajectories(format: ImportFormat, data: unknown): Trajectory[] {
  if (format === "tau2") {
    if (!isObj(data) || !Array.isArray(data.simulations)) {
      throw new ImportError(
        "file",
        "a tau2 file is an object with a simulations list",
      );
    }
    const toolset = tau2Toolset(data);
    return data.simulations.map((s, i) => {
      if (!isObj(s) || !Array.isArray(s.messages)) {
        throw new ImportError(`simulation ${i}`, "no messages list");
      }
      const where = `simulation ${i}`;
      return {
        task_id: String(s.task_id ?? i),
        trial: trialOf(s.trial, where),
        reward: rewardOf(
          isObj(s.reward_info) ? s.reward_info.reward : null,
          where,
        ),
        messages: s.messages,
        style: "tau2",
        toolset,
        ...(typeof s.id === "string" && s.id ? { simulation: s.id } : {}),
      };
    });
  }
  if (!Array.isArray(data)) {
    throw new ImportError("file", `a ${format} file is a JSON list`);
  }
  return data.map((t, i) => {
    if (format === "tau-bench") {
      if (!isObj(t) || !Array.isArray(t.traj)) {
        throw new ImportError(`trajectory ${i}`, "no traj list");
      }
      return {
        task_id: String(t.task_id ?? i),
        trial: trialOf(t.trial, `trajectory ${i}`),
        reward: rewardOf(t.reward, `trajectory ${i}`),
        messages: t.traj,
        style: "openai",
        toolset: null,
      };
    }
    const messages = Array.isArray(t)
      ? t
      : isObj(t) && Array.isArray(t.messages)
      ? t.messages
      : null;
    if (!messages) {
      throw new ImportError(
        `trajectory ${i}`,
        "expected a list of messages or {messages}",
      );
    }
    let toolset: ToolsetExposedPayload | null = null;
    try {
      toolset = isObj(t) ? openaiToolset(t.tools) : null;
    } catch (err) {
      throw new ImportError(`trajectory ${i}`, (err as Error).message);
    }
    return {
      task_id: String(isObj(t) ? t.id ?? t.task_id ?? i : i),
      trial: trialOf(isObj(t) ? t.trial : 0, `trajectory ${i}`),
      reward: rewardOf(isObj(t) ? t.reward : null, `trajectory ${i}`),
      messages,
      style: "openai",
      toolset,
    };
  });
}

/** A trajectory's trial number: absent is 0; one JSON cannot hold is refused. */
function trialOf(v: unknown, where: string): number {
  const trial = Number(v ?? 0);
  if (!Number.isFinite(trial)) {
    throw new ImportError(
      where,
      `"trial" is ${
        typeof v === "number" ? String(v) : JSON.stringify(v)
      }, not a finite number (a literal like 1e400 is past what JSON numbers hold): write the trial as a small integer`,
    );
  }
  return trial;
}

/** A trajectory's reward: a finite number, or null when it has none. */
function rewardOf(v: unknown, where: string): number | null {
  if (typeof v !== "number") return null;
  if (!Number.isFinite(v)) {
    throw new ImportError(
      where,
      `"reward" is ${v}, not a finite number (a literal like 1e400 is past what JSON numbers hold)`,
    );
  }
  return v;
}

function parseMaybeJson(text: string): unknown {
  const t = text.trimStart();
  if (t.startsWith("{") || t.startsWith("[")) {
    try {
      return JSON.parse(text);
    } catch { /* plain text */ }
  }
  return text;
}

/** Options of {@linkcode convertTrajectories}. */
export interface ConvertOptions {
  /** The file's format. */
  format: ImportFormat;
  /** Capture id. */
  captureId: string;
  /** File name, for provenance. */
  fileName?: string;
  /** Clock (events get import time; order within an episode is by position). */
  now?: () => Date;
  /** Event id generator (random ids when absent; a counter makes a load reproducible). */
  newId?: () => string;
  /** The domain's tools: an agent call of any other tool is refused (all tools when absent; user-side calls are not checked). */
  tools?: readonly string[] | null;
}

/**
 * Convert a file into events, per episode. A leading UTF-8 byte-order mark
 * is skipped (the digest is of the text as given).
 *
 * @param text The file's text.
 * @param options Format, capture, file name.
 * @returns Episodes with their events, and the file digest.
 * @throws {ImportError} Naming the position of the first problem.
 */
export function convertTrajectories(
  text: string,
  options: ConvertOptions,
): {
  digest: string;
  episodes: { episode_id: string; events: UnsealedEvent[] }[];
} {
  const { format } = options;
  let data: unknown;
  try {
    data = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (err) {
    throw new ImportError("file", `not JSON (${(err as Error).message})`);
  }
  const digest = sha256Digest(text);
  const ids = new EpisodeIds();
  const episodes = trajectories(format, data).map((t, index) =>
    convertTrajectory(t, { index, digest, ids, options })
  );
  return { digest, episodes };
}

/** Episode ids unique within one file, in linear time. */
class EpisodeIds {
  readonly #seen = new Set<string>();
  readonly #next = new Map<string, number>();

  /**
   * A unique id for a trajectory: `<format>_<task>_<trial>` (cut to fit),
   * then `_2`, `_3` … for the next trajectories with the same base.
   */
  take(format: ImportFormat, t: Trajectory): string {
    const base = `${format}_${t.task_id}_${t.trial}`.replace(
      /[^A-Za-z0-9_.-]/g,
      "_",
    ).slice(0, MAX_ID_LENGTH - 8);
    let id = base;
    let k = this.#next.get(base) ?? 1;
    while (this.#seen.has(id)) id = `${base}_${++k}`;
    this.#next.set(base, k);
    this.#seen.add(id);
    return id;
  }
}

/** Convert one trajectory (number `index` of its file) into an episode. */
function convertTrajectory(
  t: Trajectory,
  at: {
    index: number;
    digest: string;
    ids: EpisodeIds;
    options: ConvertOptions;
  },
): { episode_id: string; events: UnsealedEvent[] } {
  const { index, options } = at;
  const format = options.format;
  const episodeId = at.ids.take(format, t);
  const ctx: EventContext = {
    captureId: options.captureId,
    episodeId,
    source: { host: format, adapter: `import-${format}`, model: null },
    ...(options.now ? { now: options.now } : {}),
    ...(options.newId ? { newId: options.newId } : {}),
  };
  const events: UnsealedEvent[] = [
    episodeStarted(ctx, {
      reason: "import",
      task: { task_id: t.task_id, trial: t.trial },
      provenance: {
        format,
        file: options.fileName ?? null,
        file_sha256: at.digest,
        index,
      },
    }),
    ...(t.toolset ? [toolsetExposed(ctx, t.toolset)] : []),
  ];
  const ledger = new CallLedger();
  const where = `trajectory ${index} (task ${t.task_id}${
    t.simulation ? `, simulation ${t.simulation}` : ""
  })`;
  t.messages.forEach((m, j) => {
    const from = events.length;
    messageEvents(m, `${where}, message ${j}`, j, {
      ctx,
      ledger,
      events,
      style: t.style,
      tools: options.tools ?? null,
    });
    assertSealable(events.slice(from), `${where}, message ${j}`);
  });
  closeEpisode(format, t, where, { ctx, ledger, events });
  return { episode_id: episodeId, events };
}

/** One episode's events as they are built. */
interface EpisodeBuild {
  /** The episode's event context. */
  ctx: EventContext;
  /** Its open tool calls. */
  ledger: CallLedger;
  /** Its events so far. */
  events: UnsealedEvent[];
}

/** Turn message `j` (at `where`) into events of the episode `b`. */
function messageEvents(
  m: unknown,
  where: string,
  j: number,
  b: EpisodeBuild & {
    style: Trajectory["style"];
    tools: readonly string[] | null;
  },
): void {
  if (!isObj(m) || typeof m.role !== "string") {
    throw new ImportError(where, "a message needs a role");
  }
  const content = typeof m.content === "string"
    ? m.content
    : m.content == null
    ? ""
    : JSON.stringify(m.content);
  if (m.role === "user" && content) {
    b.events.push(message(b.ctx, { role: "user", text: content }));
  }
  if (m.role === "assistant" && content && content !== "None") {
    b.events.push(message(b.ctx, { role: "assistant", text: content }));
  }
  if (m.role === "assistant" || m.role === "user") {
    // In dual-control conversations (τ² telecom) the user calls tools
    // on their own device: those calls are the user's, never the agent's.
    const party: Party = m.role;
    const calls = Array.isArray(m.tool_calls) ? m.tool_calls : [];
    calls.forEach((c, k) => {
      const call = parseCall(c, {
        style: b.style,
        party,
        tools: party === "assistant" ? b.tools : null,
        message: j,
        index: k,
        where: `${where}, tool call ${k}`,
      });
      const ev = toolCallStarted(b.ctx, {
        tool: { host_name: call.name, logical_id: call.name },
        arguments: call.args,
        host_call_id: call.id,
      }, party === "user" ? { actor: "user" } : {});
      b.ledger.open(call.id, { event: ev, party, message: j });
      b.events.push(ev);
    });
  }
  if (m.role === "tool") toolResult(m, content, where, b);
}

/** A tool message (`content`, at `where`): the end of the call it answers. */
function toolResult(
  m: Record<string, unknown>,
  content: string,
  where: string,
  b: EpisodeBuild,
): void {
  const { event: start, party } = b.ledger.take({
    id: typeof m.id === "string"
      ? m.id
      : typeof m.tool_call_id === "string"
      ? m.tool_call_id
      : null,
    name: typeof m.name === "string" ? m.name : null,
    party: requestorOf(m),
  }, where);
  const common = {
    tool: start.payload.tool as {
      host_name: string;
      logical_id: string | null;
    },
    arguments: start.payload.arguments as Record<string, unknown>,
    host_call_id: start.payload.host_call_id as string,
  };
  const opts = {
    parentEventId: start.event_id,
    ...(party === "user" ? { actor: "user" } : {}),
  };
  if (m.error === true || /^Error:/.test(content)) {
    b.events.push(
      toolCallFailed(
        b.ctx,
        { ...common, error: { message: content } },
        opts,
      ),
    );
  } else {
    const parsed = parseMaybeJson(content);
    b.events.push(toolCallCompleted(b.ctx, {
      ...common,
      result: parsed,
      ...(typeof parsed !== "string" ? { result_text: content } : {}),
    }, opts));
  }
}

/** Check that every call that needs a result has one; add the outcome and the end. */
function closeEpisode(
  format: ImportFormat,
  t: Trajectory,
  at: string,
  b: EpisodeBuild,
): void {
  const open = b.ledger.pending();
  // A user-side call always needs its result (the user acted on it); an
  // agent's call may stay open only in OpenAI-message logs.
  const unanswered = format !== "openai-messages"
    ? open[0]
    : open.find((c) => c.party === "user");
  if (unanswered) {
    throw new ImportError(
      `${at}, message ${unanswered.message}`,
      `the ${unanswered.party === "user" ? "user's " : ""}call of ${
        (unanswered.event.payload.tool as { host_name: string }).host_name
      } (id ${unanswered.event.payload.host_call_id}) has no tool result`,
    );
  }
  if (t.reward !== null) {
    b.events.push(
      annotation(b.ctx, {
        type: "episode.outcome",
        success: t.reward >= 1,
        outcome: { reward: t.reward },
      }),
    );
  }
  b.events.push(episodeFinished(b.ctx, {
    reason: "imported",
    incomplete_calls: open.map((c) => c.event.event_id),
  }));
}
