/**
 * host_b (Gemini CLI hooks) → canonical events. Capture only: no
 * enforcement, no tool filtering.
 *
 * | hook | events |
 * | --- | --- |
 * | SessionStart | `episode.started` (`reason` = `source`) |
 * | BeforeAgent | `message` (user, `prompt`) |
 * | BeforeToolSelection | `model.requested`: model, message count and a digest of the request; the full request only with `fullModelRequests` |
 * | BeforeTool | `tool.call.started` (no host call id: correlated by session, tool and input) |
 * | AfterTool | `tool.call.completed`, or `tool.call.failed` when `tool_response.error` is set or a shell command's `Exit Code: N` is not 0 |
 * | AfterModel (server mode) | at a chunk with a `finishReason`: `model.responded` with `usageMetadata` as usage, and `message` (assistant) with the streamed text |
 * | AfterAgent | `message` (assistant, `prompt_response`) when no AfterModel text was recorded for the turn; else `annotation` `agent.responded` with the host's `prompt_response` |
 * | PreCompress | `annotation` `compaction.checked` with `trigger` (0.61 sends it before every model call) |
 * | Notification (interactive only) | `ToolPermission` (the approval prompt): `annotation` `permission.requested` with the pending call's `tool` and `arguments` and `parent_event_id` when exactly one pending call fits, and what the host said (`notification_type`, `message`, `details`); any other type: `annotation` `notification.shown` |
 * | SessionEnd | `episode.finished` (with the calls that never completed) |
 * | anything else (BeforeModel) | none |
 *
 * Failed or refused (host_b's own signal): `tool_response.error` is
 * `error.outcome = "failed"`, the whole `tool_response` (what the model saw,
 * `llmContent`, and the user, `returnDisplay`) kept as `result`; a shell command's non-zero `Exit Code` is
 * failed with `error.exit_code`. host_b gives no refusal signal in hooks
 * (BeforeTool fires before approval; a denied call has no AfterTool and is
 * left incomplete).
 *
 * The host's own `timestamp` becomes the event timestamp.
 *
 * @module
 */
import type { EventContext } from "../trace/make_event.ts";
import type { ToolCallCorrelator } from "./correlator.ts";
import type { SessionMemory } from "./session_memory.ts";
import type { UnsealedEvent } from "../trace/event.ts";
import {
  annotation,
  episodeFinished,
  episodeStarted,
  message,
} from "../trace/episode_events.ts";
import { modelRequested, modelResponded } from "../trace/model_events.ts";
import {
  toolCallCompleted,
  toolCallFailed,
  toolCallStarted,
  type ToolRef,
} from "../trace/tool_events.ts";
import { canonicalJson } from "../trace/canonical_json.ts";
import { sha256Digest } from "../trace/hash.ts";
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

const HOST = "host_b";

function toolRef(p: Record<string, unknown>, name: string): ToolRef {
  const mcp = objectField(p, "mcp_context");
  const server = optString(mcp, "server_name");
  const tool = optString(mcp, "tool_name");
  return {
    host_name: name,
    logical_id: server && tool ? mcpLogicalId(server, tool) : null,
  };
}

/** Text content of an MCP-style `llmContent` list, when it is one. */
function mcpText(llmContent: unknown): string | undefined {
  if (!Array.isArray(llmContent)) return undefined;
  const texts = llmContent.map((c) =>
    typeof c?.text === "string" ? c.text : ""
  );
  return texts.join("");
}

/** A shell call's `Exit Code: N` in its `llmContent`, or null. */
function shellExit(llmContent: unknown): number | null {
  if (typeof llmContent !== "string") return null;
  const m = /^Exit Code: (-?\d+)$/m.exec(llmContent);
  return m ? Number(m[1]) : null;
}

/**
 * Map one host_b hook payload to canonical events.
 *
 * @param payload The hook's JSON.
 * @param options Capture, model, correlator, clock, `fullModelRequests`.
 * @returns Zero or more unsealed events.
 * @throws {HookPayloadError} When the payload is not an object or lacks `session_id` / `hook_event_name`.
 */
export function hostBToEvents(
  payload: unknown,
  options: AdapterOptions,
): UnsealedEvent[] {
  const p = asObject(payload);
  const hook = requireString(p, "hook_event_name");
  const session = requireString(p, "session_id");
  const episodeId = episodeIdOf(session);
  const ctx = contextFor(options, {
    host: HOST,
    episodeId,
    hostTimestamp: optString(p, "timestamp"),
  });
  const correlator = options.correlator ?? null;
  const memory = options.sessions ?? null;
  const h: Hook = { p, ctx, correlator, memory, session };
  switch (hook) {
    case "SessionStart":
      memory?.started(HOST, session);
      return [episodeStarted(ctx, {
        reason: optString(p, "source") ?? "startup",
        ...(typeof p.cwd === "string" ? { cwd: p.cwd } : {}),
      })];
    case "BeforeAgent":
      return [
        message(ctx, { role: "user", text: optString(p, "prompt") ?? "" }),
      ];
    case "AfterAgent": {
      // With AfterModel installed the answer was recorded from the
      // streamed pieces; prompt_response repeats pieces of them, so it is
      // kept as the host said it, not as a second message.
      const text = optString(p, "prompt_response") ?? "";
      if (memory?.takeAnswered(HOST, session)) {
        return [annotation(ctx, {
          type: "agent.responded",
          prompt_response: text,
        }, { actor: "host" })];
      }
      return [message(ctx, { role: "assistant", text })];
    }
    case "PreCompress":
      return [annotation(ctx, {
        type: "compaction.checked",
        trigger: optString(p, "trigger") ?? null,
      }, { actor: "host" })];
    case "AfterModel":
      return memory ? modelAnswered(h, memory) : [];
    case "BeforeToolSelection":
      return [modelRequest(h, options.fullModelRequests === true)];
    case "BeforeTool": {
      const name = requireString(p, "tool_name");
      const input = objectField(p, "tool_input");
      const ev = toolCallStarted(ctx, {
        tool: toolRef(p, name),
        arguments: input,
      });
      correlator?.start(
        { host: HOST, session, tool: name, input },
        ev.event_id,
      );
      return [ev];
    }
    case "AfterTool":
      return [toolEnded(h)];
    case "Notification":
      return [notification(h)];
    case "SessionEnd": {
      if (memory && !memory.end(HOST, session)) return []; // a duplicate end
      const open = correlator?.endSession(HOST, session) ?? [];
      return [episodeFinished(ctx, {
        reason: optString(p, "reason") ?? "unknown",
        incomplete_calls: open.map((c) => c.event_id),
      })];
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
 * `AfterModel`: a streamed piece of the answer; the last one (with a finish
 * reason) gives the model's answer and usage, and the text gathered so far.
 */
function modelAnswered(h: Hook, memory: SessionMemory): UnsealedEvent[] {
  const { p, ctx, session } = h;
  const res = objectField(p, "llm_response");
  const chunk = typeof res.text === "string" ? res.text : "";
  if (chunk) memory.appendText(HOST, session, chunk);
  const candidates = Array.isArray(res.candidates) ? res.candidates : [];
  const done = candidates.some((c) =>
    typeof c === "object" && c !== null &&
    typeof (c as { finishReason?: unknown }).finishReason === "string"
  );
  if (!done) return [];
  const text = memory.takeText(HOST, session);
  const usage = objectField(res, "usageMetadata");
  const model = memory.model(HOST, session);
  const mctx = {
    ...ctx,
    source: { ...ctx.source, model: model ?? ctx.source.model },
  };
  return [
    modelResponded(mctx, {
      response: {
        model,
        text_chars: text.length,
        ...(typeof usage.promptTokenCount === "number"
          ? {
            usage: {
              input_tokens: usage.promptTokenCount,
              output_tokens: usage.candidatesTokenCount ?? null,
              total_tokens: usage.totalTokenCount ?? null,
            },
          }
          : {}),
      },
    }, { actor: "host" }),
    ...(text ? [message(ctx, { role: "assistant", text })] : []),
  ];
}

/** `BeforeToolSelection`: the model request (whole, or its digest). */
function modelRequest(h: Hook, full: boolean): UnsealedEvent {
  const { p, ctx, memory, session } = h;
  const req = objectField(p, "llm_request");
  const model = optString(req, "model") ?? null;
  memory?.setModel(HOST, session, model);
  const messages = Array.isArray(req.messages) ? req.messages.length : 0;
  return modelRequested(
    { ...ctx, source: { ...ctx.source, model: model ?? ctx.source.model } },
    {
      request: full ? req : {
        model,
        message_count: messages,
        digest: sha256Digest(canonicalJson(req)),
      },
    },
    { actor: "host" },
  );
}

/**
 * `Notification`: a tool-approval prompt (`ToolPermission`; BeforeTool has
 * fired, AfterTool waits for the user) is a permission request for the
 * pending call it shows, when exactly one fits (the shell command in
 * `details` narrows several); other notifications as the host said them.
 */
function notification(h: Hook): UnsealedEvent {
  const { p, ctx, correlator, session } = h;
  const type = optString(p, "notification_type") ?? null;
  const said = {
    notification_type: type,
    message: optString(p, "message") ?? null,
    details: objectField(p, "details"),
  };
  if (type !== "ToolPermission") {
    return annotation(ctx, { type: "notification.shown", ...said }, {
      actor: "host",
    });
  }
  let calls = correlator?.pending(HOST, session) ?? [];
  const command = optString(said.details, "command");
  if (calls.length > 1 && command !== undefined) {
    calls = calls.filter((c) => c.arguments.command === command);
  }
  const call = calls.length === 1 ? calls[0] : null;
  return annotation(ctx, {
    type: "permission.requested",
    tool: call?.tool ?? null,
    arguments: call?.arguments ?? {},
    ...said,
  }, { actor: "host", parentEventId: call?.event_id ?? null });
}

/** `AfterTool`: the call's end (a shell command's non-zero exit fails it). */
function toolEnded(h: Hook): UnsealedEvent {
  const { p, ctx, correlator, session } = h;
  const name = requireString(p, "tool_name");
  const input = objectField(p, "tool_input");
  const link = correlator?.finish({
    host: HOST,
    session,
    tool: name,
    input,
  });
  const response = objectField(p, "tool_response");
  const common = {
    tool: toolRef(p, name),
    arguments: input,
    ...(link ? { correlation: link.correlation } : {}),
  };
  const opts = { parentEventId: link?.parentEventId ?? null };
  if (response.error !== undefined && response.error !== null) {
    const e = response.error;
    return toolCallFailed(ctx, {
      ...common,
      // What the model saw (`llmContent`) and the user (`returnDisplay`),
      // beside the error.
      result: p.tool_response ?? null,
      error: typeof e === "object" && !Array.isArray(e)
        ? { ...e, outcome: "failed" }
        : { message: String(e), outcome: "failed" },
    }, opts);
  }
  const code = name === "run_shell_command"
    ? shellExit(response.llmContent)
    : null;
  if (code !== null && code !== 0) {
    return toolCallFailed(ctx, {
      ...common,
      result: p.tool_response ?? null,
      error: {
        type: "exit_code",
        exit_code: code,
        outcome: "failed",
        message: String(response.returnDisplay ?? response.llmContent),
      },
    }, opts);
  }
  const text = mcpText(response.llmContent);
  const structured = common.tool.logical_id ? parseJsonText(text) : undefined;
  return toolCallCompleted(ctx, {
    ...common,
    result: p.tool_response ?? null,
    ...(structured !== undefined ? { structured_result: structured } : {}),
  }, opts);
}
