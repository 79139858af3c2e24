/**
 * host_c (OpenCode) → canonical events, through the stable envelope
 * `harness.host_c-hook.v1` that the harness plugin posts (see
 * docs/capture.md for its fields).
 *
 * | envelope hook | events |
 * | --- | --- |
 * | session.created | `episode.started` (`cwd`; a subagent's has `parent_session_id` and `parent_event_id` = the parent's `task` call) |
 * | chat.message | `message` (user) |
 * | message.text | `message` (assistant) |
 * | tool.execute.before | `tool.call.started` (`host_call_id` = `call_id`) |
 * | tool.execute.after | `tool.call.completed`, or `tool.call.failed` when `error` is set |
 * | session.error | `annotation` `session.error`, and `episode.outcome` failure |
 * | model.responded | `model.responded` with the model and token usage |
 * | session.retry, session.compacted | `annotation` of that type |
 * | session.deleted, session.finished, session.ended | `episode.finished`, once per session; a deletion after the end: `annotation` `session.deleted` |
 * | any other hook name | none |
 *
 * Failed or refused (host_c's own signal): a failed call the plugin marks
 * `refused` (the user rejected its permission request, or a permission
 * rule denied it) is `error.outcome = "refused"`, any other error
 * `"failed"`; a completed shell call whose `metadata.exit` is not 0 is
 * `tool.call.failed` with `error.exit_code`.
 *
 * A child session (a subagent, `parent_session_id`): every one of its
 * events that has no parent of its own (all but a call's completion) has
 * `parent_event_id` = the parent's `task` call that started it (see
 * `subagent_links.ts`).
 *
 * @module
 */
import type { UnsealedEvent } from "../trace/event.ts";
import type { EventContext } from "../trace/make_event.ts";
import {
  annotation,
  episodeFinished,
  episodeStarted,
  message,
} from "../trace/episode_events.ts";
import { modelResponded } from "../trace/model_events.ts";
import { toolEnded, toolStarted } from "./_opencode_tools.ts";
import type { HostCEnvelope } from "./_opencode_envelope.ts";
import { linkToCall, subagentCall } from "./subagent_links.ts";

export type { HostCEnvelope };
import {
  type AdapterOptions,
  contextFor,
  episodeIdOf,
  HookPayloadError,
} from "./common.ts";

const HOST = "host_c";

/** Name of the envelope schema. */
export const HOST_C_ENVELOPE = "harness.host_c-hook.v1";

/** A payload that breaks the `harness.host_c-hook.v1` envelope (the seed's ValueError). */
export class EnvelopeError extends HookPayloadError {
  /** The offending field. */
  readonly field: string;
  /**
   * Create a `EnvelopeError`.
   *
   * @param field The offending field.
   * @param message What is wrong.
   */
  constructor(field: string, message: string) {
    super(`Invalid ${HOST_C_ENVELOPE} envelope, field "${field}": ${message}`);
    this.name = "EnvelopeError";
    this.field = field;
  }
}

function str(o: Record<string, unknown>, f: string, required: boolean) {
  const v = o[f];
  if (v === undefined || v === null) {
    if (required) throw new EnvelopeError(f, "required string is missing");
    return undefined;
  }
  if (typeof v !== "string") throw new EnvelopeError(f, "expected a string");
  return v;
}

/**
 * Check a value against the envelope.
 *
 * @param payload Parsed JSON.
 * @returns The envelope.
 * @throws {EnvelopeError} Naming the first field that breaks it.
 */
export function parseHostCEnvelope(payload: unknown): HostCEnvelope {
  if (
    typeof payload !== "object" || payload === null || Array.isArray(payload)
  ) {
    throw new EnvelopeError("$", "expected a JSON object");
  }
  const o = payload as Record<string, unknown>;
  if (o.schema_version !== HOST_C_ENVELOPE) {
    throw new EnvelopeError("schema_version", `expected "${HOST_C_ENVELOPE}"`);
  }
  const hook = str(o, "hook", true)!;
  const env: HostCEnvelope = {
    schema_version: HOST_C_ENVELOPE,
    hook,
    session_id: str(o, "session_id", true)!,
  };
  for (
    const f of [
      "ts",
      "mcp_server",
      "mcp_tool",
      "text",
      "model",
      "reason",
      "provider",
      "finish",
      "message",
      "cwd",
    ] as const
  ) {
    const v = str(o, f, false);
    if (v !== undefined) env[f] = v;
  }
  if (o.parent_session_id !== undefined) {
    env.parent_session_id = str(o, "parent_session_id", false) ?? null;
  }
  if (hook.startsWith("tool.execute.")) {
    env.call_id = str(o, "call_id", true);
    env.tool = str(o, "tool", true);
  }
  if (o.args !== undefined) {
    if (
      typeof o.args !== "object" || o.args === null || Array.isArray(o.args)
    ) {
      throw new EnvelopeError("args", "expected an object");
    }
    env.args = o.args as Record<string, unknown>;
  }
  if (o.tokens !== undefined) {
    if (typeof o.tokens !== "object" || o.tokens === null) {
      throw new EnvelopeError("tokens", "expected an object");
    }
    env.tokens = o.tokens as Record<string, unknown>;
  }
  if (typeof o.attempt === "number") env.attempt = o.attempt;
  if (o.refused === true) env.refused = true;
  if ("result" in o) env.result = o.result;
  if ("error" in o) env.error = o.error;
  return env;
}

/**
 * Map one host_c envelope to canonical events.
 *
 * @param payload The envelope.
 * @param options Capture, model, correlator, clock.
 * @returns Zero or more unsealed events.
 * @throws {EnvelopeError} When the payload breaks the envelope.
 */
export function hostCToEvents(
  payload: unknown,
  options: AdapterOptions,
): UnsealedEvent[] {
  const env = parseHostCEnvelope(payload);
  let episodeId: string;
  try {
    episodeId = episodeIdOf(env.session_id);
  } catch (err) {
    throw new EnvelopeError("session_id", (err as Error).message);
  }
  const ctx = contextFor(
    { ...options, model: env.model ?? options.model },
    { host: HOST, episodeId, hostTimestamp: env.ts },
  );
  const events = envelopeEvents(env, { ctx, options });
  // A child session's events: under the task call that started it.
  return linkToCall(
    events,
    options.sessions?.startedBy(HOST, env.session_id) ?? null,
  );
}

/** The events of one envelope, before a child session's are linked. */
function envelopeEvents(
  env: HostCEnvelope,
  o: { ctx: EventContext; options: AdapterOptions },
): UnsealedEvent[] {
  const { ctx, options } = o;
  const correlator = options.correlator ?? null;
  const session = env.session_id;
  switch (env.hook) {
    case "session.created": {
      const memory = options.sessions ?? null;
      memory?.started(HOST, session);
      // A child session: linked to the parent's task call that started it.
      const call = env.parent_session_id
        ? subagentCall({
          host: HOST,
          session: env.parent_session_id,
          agent: session,
          tools: ["task"],
        }, { correlator, memory })
        : null;
      if (call) memory?.setStartedBy(HOST, session, call);
      return [episodeStarted(ctx, {
        reason: "created",
        ...(env.cwd ? { cwd: env.cwd } : {}),
        ...(env.parent_session_id
          ? { parent_session_id: env.parent_session_id }
          : {}),
      }, { parentEventId: call })];
    }
    case "chat.message":
      return [message(ctx, { role: "user", text: env.text ?? "" })];
    case "message.text":
      return [message(ctx, { role: "assistant", text: env.text ?? "" })];
    case "tool.execute.before":
      return [toolStarted({ env, ctx, correlator })];
    case "tool.execute.after":
      return [toolEnded({ env, ctx, correlator })];
    case "session.error":
      // A model or API failure: the episode failed.
      return [
        annotation(ctx, {
          type: "session.error",
          error: env.error ?? null,
        }, { actor: "host" }),
        annotation(ctx, {
          type: "episode.outcome",
          success: false,
          outcome: { reason: "session.error", error: env.error ?? null },
        }, { actor: "host" }),
      ];
    case "session.retry":
    case "session.compacted":
      return [annotation(ctx, {
        type: env.hook,
        ...(env.attempt !== undefined ? { attempt: env.attempt } : {}),
        ...(env.message !== undefined ? { message: env.message } : {}),
      }, { actor: "host" })];
    case "model.responded":
      return [modelAnswer(env, ctx)];
    case "session.deleted":
    case "session.finished":
    case "session.ended": {
      const memory = options.sessions ?? null;
      if (memory && !memory.end(HOST, session)) {
        // A second end gives no second episode.finished; a deletion of a
        // session that already ended (at dispose) is still recorded.
        return env.hook === "session.deleted"
          ? [annotation(ctx, { type: "session.deleted" }, { actor: "host" })]
          : [];
      }
      const open = correlator?.endSession(HOST, session) ?? [];
      return [episodeFinished(ctx, {
        reason: env.reason ?? env.hook,
        incomplete_calls: open.map((c) => c.event_id),
      })];
    }
    default:
      return [];
  }
}

/** `model.responded`: the model, provider, finish reason and token usage. */
function modelAnswer(env: HostCEnvelope, ctx: EventContext): UnsealedEvent {
  const t = env.tokens ?? {};
  const num = (v: unknown) => typeof v === "number" ? v : null;
  return modelResponded(
    {
      ...ctx,
      source: { ...ctx.source, model: env.model ?? ctx.source.model },
    },
    {
      response: {
        model: env.model ?? null,
        provider: env.provider ?? null,
        finish: env.finish ?? null,
        usage: {
          input_tokens: num(t.input),
          output_tokens: num(t.output),
          total_tokens: num(t.total),
          reasoning_tokens: num(t.reasoning),
        },
      },
    },
    { actor: "host" },
  );
}
