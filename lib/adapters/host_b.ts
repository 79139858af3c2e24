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
 * | AfterTool | `tool.call.completed`, or `tool.call.failed` when `tool_response.error` is set |
 * | AfterAgent | `message` (assistant, `prompt_response`) |
 * | SessionEnd | `episode.finished` (with the calls that never completed) |
 * | anything else (BeforeModel, AfterModel, PreCompress, Notification) | none |
 *
 * The host's own `timestamp` becomes the event timestamp.
 *
 * @module
 */
import type { UnsealedEvent } from "../trace/event.ts";
import {
  episodeFinished,
  episodeStarted,
  message,
  modelRequested,
  modelResponded,
  toolCallCompleted,
  toolCallFailed,
  toolCallStarted,
  type ToolRef,
} from "../trace/events.ts";
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
  const ctx = contextFor(options, HOST, episodeId, optString(p, "timestamp"));
  const correlator = options.correlator ?? null;
  const memory = options.sessions ?? null;
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
    case "AfterAgent":
      // With session memory the answer was recorded from the streamed
      // AfterModel pieces; prompt_response repeats pieces of them.
      if (memory) return [];
      return [message(ctx, {
        role: "assistant",
        text: optString(p, "prompt_response") ?? "",
      })];
    case "AfterModel": {
      if (!memory) return [];
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
    case "BeforeToolSelection": {
      const req = objectField(p, "llm_request");
      const model = optString(req, "model") ?? null;
      memory?.setModel(HOST, session, model);
      const messages = Array.isArray(req.messages) ? req.messages.length : 0;
      return [modelRequested(
        { ...ctx, source: { ...ctx.source, model: model ?? ctx.source.model } },
        {
          request: options.fullModelRequests ? req : {
            model,
            message_count: messages,
            digest: sha256Digest(canonicalJson(req)),
          },
        },
        { actor: "host" },
      )];
    }
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
    case "AfterTool": {
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
        return [
          toolCallFailed(ctx, { ...common, error: response.error }, opts),
        ];
      }
      const text = mcpText(response.llmContent);
      const structured = common.tool.logical_id
        ? parseJsonText(text)
        : undefined;
      return [toolCallCompleted(ctx, {
        ...common,
        result: p.tool_response ?? null,
        ...(structured !== undefined ? { structured_result: structured } : {}),
      }, opts)];
    }
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
