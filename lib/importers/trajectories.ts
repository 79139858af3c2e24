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
import type { EventContext } from "../trace/make_event.ts";
import {
  toolCallCompleted,
  toolCallFailed,
  toolCallStarted,
  toolsetExposed,
} from "../trace/tool_events.ts";
import { sha256Digest } from "../trace/hash.ts";
import { CallLedger, parseCall, type Party, requestorOf } from "./_calls.ts";
import { ImportError } from "./import_error.ts";
import { assertSealable } from "./sealable.ts";
import type { ImportFormat } from "./import_formats.ts";
import { EpisodeIds } from "./_episode_ids.ts";
import { trajectories, type Trajectory } from "./_trajectory.ts";

export { ImportError };

export { IMPORT_FORMATS, type ImportFormat } from "./import_formats.ts";

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
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

/**
 * Convert one trajectory (number `index` of its file) into an episode.
 *
 * @param t The trajectory.
 * @param at Its position, the file's digest, the file's episode ids and
 *   the conversion's options.
 * @returns The episode's id and events.
 * @throws {ImportError} Naming the message of the first problem.
 */
export function convertTrajectory(
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
