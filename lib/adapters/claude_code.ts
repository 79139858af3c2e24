/**
 * host_a (Claude Code hooks) → canonical events.
 *
 * | hook | events |
 * | --- | --- |
 * | SessionStart | `episode.started` (`reason` = `source`) |
 * | UserPromptSubmit | `message` (user) |
 * | PreToolUse | `tool.call.started` (`host_call_id` = `tool_use_id`; a subagent's call has `parent_event_id` = the Agent/Task call that started the subagent) |
 * | PostToolUse | `tool.call.completed` (MCP structured results also parsed into `structured_result`) |
 * | PostToolUseFailure | `tool.call.failed` |
 * | PostToolBatch | `tool.call.failed` (`error.type` = `not_executed`) for each call still pending: refused or blocked |
 * | PermissionRequest | `annotation` `permission.requested` |
 * | SubagentStart / SubagentStop | `annotation` `subagent.started` / `subagent.stopped`, `parent_event_id` = the Agent/Task call (see `subagent_links.ts`) |
 * | SubagentStart | first, the main session's transcript turns it carries (as for Stop, unlinked): the main agent's text before the call comes before the subagent's |
 * | Stop | per transcript turn (the forwarder's `harness_transcript`) `model.responded` with usage and `message` (assistant); `message` (assistant, `last_assistant_message`) |
 * | SubagentStop | the subagent's transcript turns as for Stop (with `agent_id`), then `annotation` `subagent.stopped` |
 * | PreCompact / PostCompact | transcript turns (PreCompact); `annotation` `compaction.started` / `compaction.finished` with what the host said |
 * | StopFailure | transcript turns as for Stop; `annotation` `stop.failed` with `error` and `last_message` (the text the user saw) |
 * | SessionEnd | transcript turns not read yet (written after the last Stop), then `episode.finished` (with the calls that never completed) |
 * | anything else (Setup, …) | none |
 *
 * A subagent's events (`agent_id`) that have no parent of their own (all
 * but a call's completion) have `parent_event_id` = the Agent/Task call
 * that started it (see `subagent_links.ts`).
 *
 * Failed or refused (host_a's own signal): a call that ends at
 * PostToolBatch without PostToolUse/PostToolUseFailure never ran (denied
 * by permissions or blocked by a hook): `error.outcome = "refused"`.
 * PostToolUseFailure is `error.outcome = "failed"`, with `error.exit_code`
 * when a shell command exited non-zero (`"Exit code N\n…"`).
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
import {
  toolCallCompleted,
  toolCallFailed,
  toolCallStarted,
  type ToolRef,
} from "../trace/tool_events.ts";
import {
  type AdapterOptions,
  asObject,
  contextFor,
  episodeIdOf,
  mcpLogicalId,
  objectField,
  optString,
  parseJsonText,
  requireString,
} from "./common.ts";
import {
  transcriptCarries,
  transcriptEvents,
} from "./_claude_code_transcript.ts";
import type { EventContext } from "../trace/make_event.ts";
import type { ToolCallCorrelator } from "./correlator.ts";
import type { SessionMemory } from "./session_memory.ts";
import { linkToCall, subagentCall } from "./subagent_links.ts";

const HOST = "host_a";

/** host_a tools that start a subagent. */
const AGENT_TOOLS = ["Agent", "Task"];

/** Fields every host_a payload carries (not repeated in annotations). */
const COMMON = new Set([
  "session_id",
  "transcript_path",
  "cwd",
  "hook_event_name",
  "prompt_id",
  "permission_mode",
  "effort",
  "harness_transcript",
]);

function hostSaid(p: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(p).filter(([k]) => !COMMON.has(k)));
}

/** The exit code of a failed shell call (`"Exit code N\n…"`), or null. */
function exitCode(name: string, error: string): number | null {
  if (name !== "Bash") return null;
  const m = /^Exit code (-?\d+)\b/.exec(error);
  return m ? Number(m[1]) : null;
}

function toolRef(p: Record<string, unknown>, name: string): ToolRef {
  const server = optString(objectField(p, "mcp_server"), "name");
  const prefix = server ? `mcp__${server}__` : "";
  if (server && name.startsWith(prefix)) {
    return {
      host_name: name,
      logical_id: mcpLogicalId(server, name.slice(prefix.length)),
    };
  }
  return { host_name: name, logical_id: null };
}

function extras(p: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (typeof p.agent_id === "string") out.agent_id = p.agent_id;
  if (typeof p.agent_type === "string") out.agent_type = p.agent_type;
  if (typeof p.prompt_id === "string") out.prompt_id = p.prompt_id;
  return out;
}

/**
 * Map one host_a hook payload to canonical events.
 *
 * @param payload The hook's JSON (command-hook stdin or HTTP-hook body).
 * @param options Capture, model, correlator, clock.
 * @returns Zero or more unsealed events.
 * @throws {HookPayloadError} When the payload is not an object or lacks `session_id` / `hook_event_name`.
 */
export function hostAToEvents(
  payload: unknown,
  options: AdapterOptions,
): UnsealedEvent[] {
  const p = asObject(payload);
  const hook = requireString(p, "hook_event_name");
  const session = requireString(p, "session_id");
  const episodeId = episodeIdOf(session);
  const ctx = contextFor(options, { host: HOST, episodeId });
  const correlator = options.correlator ?? null;
  const memory = options.sessions ?? null;
  const h: Hook = { p, ctx, correlator, memory, session };
  // The main agent's turns read at SubagentStart are its own, not the
  // subagent's: recorded first and left unlinked.
  const main = hook === "SubagentStart" ? mainTurnsAtStart(h) : [];
  // A subagent's events: under the Agent/Task call that started it.
  return [...main, ...linkToCall(hookEvents(h, hook), agentCallOf(h, false))];
}

/**
 * The main session's transcript turns a SubagentStart carries (when the
 * forwarder read them there): the main agent's text that led to the
 * Agent/Task call, recorded before anything the subagent says (read only
 * at Stop, it would come after the subagent's texts).
 */
function mainTurnsAtStart(h: Hook): UnsealedEvent[] {
  if (typeof h.p.harness_transcript !== "object") return [];
  return sessionTurns(h);
}

/** The events of one hook, before a subagent's are linked. */
function hookEvents(h: Hook, hook: string): UnsealedEvent[] {
  const { p, ctx, correlator, session } = h;
  switch (hook) {
    case "SessionStart":
      return [episodeStarted(ctx, {
        reason: optString(p, "source") ?? "startup",
        ...(typeof p.cwd === "string" ? { cwd: p.cwd } : {}),
      })];
    case "UserPromptSubmit":
      return [message(ctx, {
        role: "user",
        text: optString(p, "prompt") ?? "",
        ...extras(p),
      })];
    case "PreToolUse":
      return [toolStarted(h)];
    case "PostToolUse":
    case "PostToolUseFailure":
      return [toolEnded(h, hook)];
    case "PostToolBatch":
      return batchRefusals(h);
    case "PermissionRequest":
      return [annotation(ctx, {
        type: "permission.requested",
        tool: optString(p, "tool_name") ?? null,
        arguments: objectField(p, "tool_input"),
      }, { actor: "host" })];
    case "SubagentStart":
    case "SubagentStop":
      return subagentEvents(h, hook);
    case "Stop": {
      const text = optString(p, "last_assistant_message");
      return [
        ...sessionTurns(h, text),
        ...(text === undefined
          ? []
          : [message(ctx, { role: "assistant", text })]),
      ];
    }
    case "PreCompact":
    case "PostCompact":
      return [
        ...(hook === "PreCompact" ? sessionTurns(h) : []),
        annotation(ctx, {
          type: hook === "PreCompact"
            ? "compaction.started"
            : "compaction.finished",
          ...hostSaid(p),
        }, { actor: "host" }),
      ];
    case "StopFailure": {
      // The API failed: the transcript holds the turns before it, and the
      // text the user saw is the host's error message, not a model answer.
      const text = optString(p, "last_assistant_message");
      return [
        ...sessionTurns(h, text),
        annotation(ctx, {
          type: "stop.failed",
          error: p.error ?? null,
          ...(text === undefined ? {} : { last_message: text }),
        }, { actor: "host" }),
      ];
    }
    case "SessionEnd": {
      // Turns written after the last Stop: a session ended mid-turn, or a
      // turn the Stop's read missed (its text held, not said twice).
      const turns = sessionTurns(h);
      const open = correlator?.endSession(HOST, session) ?? [];
      return [
        ...turns,
        episodeFinished(ctx, {
          reason: optString(p, "reason") ?? "unknown",
          incomplete_calls: open.map((c) => c.event_id),
        }),
      ];
    }
    default:
      return [];
  }
}

/** One hook's payload with what its events need. */
interface Hook {
  p: Record<string, unknown>;
  ctx: EventContext;
  correlator: ToolCallCorrelator | null;
  memory: SessionMemory | null;
  session: string;
}

/**
 * The session transcript's turns a payload carries (Stop, StopFailure,
 * PreCompact, SessionEnd, SubagentStart), without the text already recorded: the hook's
 * own answer (`finalText`), and an earlier hook's answer whose turn is read
 * only now (held in the session memory until a read gives it).
 */
function sessionTurns(h: Hook, finalText?: string): UnsealedEvent[] {
  const { p, ctx, memory, session } = h;
  const held = memory?.takeHeldAnswer(HOST, session) ?? null;
  const out = transcriptEvents(p, ctx, { finalText, heldText: held });
  if (memory && typeof p.harness_transcript === "object") {
    const unread = [finalText, held].find((t) =>
      typeof t === "string" && !transcriptCarries(p, t)
    );
    memory.holdAnswer(HOST, session, unread ?? null);
  }
  return out;
}

/**
 * The start event of the Agent/Task call that started the payload's
 * subagent (`agent_id`), or null (not a subagent, or no single call).
 */
function agentCallOf(h: Hook, link: boolean): string | null {
  const agent = optString(h.p, "agent_id");
  if (!agent) return null;
  const seen = { host: HOST, session: h.session, agent };
  if (!link) return h.memory?.subagentCall(seen) ?? null;
  return subagentCall({
    ...seen,
    tools: AGENT_TOOLS,
    agentType: optString(h.p, "agent_type") ?? null,
  }, h);
}

/** `PreToolUse`: the call starts (and the correlator learns of it). */
function toolStarted(h: Hook): UnsealedEvent {
  const { p, ctx, correlator, session } = h;
  const name = requireString(p, "tool_name");
  const input = objectField(p, "tool_input");
  const callId = optString(p, "tool_use_id");
  const ev = toolCallStarted(ctx, {
    tool: toolRef(p, name),
    arguments: input,
    ...(callId ? { host_call_id: callId } : {}),
    ...extras(p),
  }, { parentEventId: agentCallOf(h, true) });
  correlator?.start({
    host: HOST,
    session,
    tool: name,
    input,
    callId,
  }, ev.event_id);
  return ev;
}

/** `PostToolUse` / `PostToolUseFailure`: the call's end, linked to its start. */
function toolEnded(h: Hook, hook: string): UnsealedEvent {
  const { p, ctx, correlator, session } = h;
  const name = requireString(p, "tool_name");
  const input = objectField(p, "tool_input");
  const callId = optString(p, "tool_use_id");
  const link = correlator?.finish({
    host: HOST,
    session,
    tool: name,
    input,
    callId,
  });
  const common = {
    tool: toolRef(p, name),
    arguments: input,
    ...(callId ? { host_call_id: callId } : {}),
    ...(typeof p.duration_ms === "number"
      ? { duration_ms: p.duration_ms }
      : {}),
    ...(link ? { correlation: link.correlation } : {}),
    ...extras(p),
  };
  const opts = { parentEventId: link?.parentEventId ?? null };
  if (hook === "PostToolUseFailure") {
    const error = optString(p, "error") ?? "";
    const code = exitCode(name, error);
    return toolCallFailed(ctx, {
      ...common,
      error: {
        message: error,
        is_interrupt: p.is_interrupt === true,
        outcome: "failed",
        ...(code !== null ? { type: "exit_code", exit_code: code } : {}),
      },
    }, opts);
  }
  const result = p.tool_response ?? null;
  const structured = common.tool.logical_id?.startsWith("mcp:")
    ? parseJsonText(result)
    : undefined;
  return toolCallCompleted(ctx, {
    ...common,
    result,
    ...(structured !== undefined ? { structured_result: structured } : {}),
  }, opts);
}

/** `PostToolBatch`: calls still pending were refused or blocked before they ran. */
function batchRefusals(h: Hook): UnsealedEvent[] {
  const { p, ctx, correlator, session } = h;
  if (!correlator) return [];
  const calls = Array.isArray(p.tool_calls) ? p.tool_calls : [];
  const out: UnsealedEvent[] = [];
  for (const c of calls) {
    if (typeof c !== "object" || c === null) continue;
    const call = c as Record<string, unknown>;
    const callId = optString(call, "tool_use_id");
    const name = optString(call, "tool_name");
    if (!callId || !name) continue;
    if (!correlator.isPending(HOST, session, callId)) continue;
    const input = objectField(call, "tool_input");
    const link = correlator.finish({
      host: HOST,
      session,
      tool: name,
      input,
      callId,
    });
    out.push(toolCallFailed(ctx, {
      tool: toolRef(p, name),
      arguments: input,
      host_call_id: callId,
      correlation: link.correlation,
      error: {
        type: "not_executed",
        outcome: "refused",
        message: typeof call.tool_response === "string"
          ? call.tool_response
          : "The call was refused or blocked before it ran",
      },
    }, { parentEventId: link.parentEventId }));
  }
  return out;
}

/**
 * `SubagentStart` / `SubagentStop` (which first reads the subagent's
 * transcript), linked to the Agent/Task call that started the subagent.
 */
function subagentEvents(h: Hook, hook: string): UnsealedEvent[] {
  const { p, ctx } = h;
  const call = agentCallOf(h, hook === "SubagentStart");
  return [
    ...(hook === "SubagentStop"
      ? transcriptEvents(p, ctx, { extra: extras(p) })
      : []),
    annotation(ctx, {
      type: hook === "SubagentStart" ? "subagent.started" : "subagent.stopped",
      ...extras(p),
      ...(typeof p.last_assistant_message === "string"
        ? { last_message: p.last_assistant_message }
        : {}),
    }, { actor: "host", parentEventId: call }),
  ];
}
