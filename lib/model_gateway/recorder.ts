/**
 * One exchange through the model gateway as canonical events: only what is
 * new since the conversation's previous request (the user's new messages,
 * the results of the model's earlier tool calls), the request and the
 * answer (`model.requested`, `model.responded` with the upstream's usage),
 * the answer's text and tool calls, and the tools offered when they change.
 *
 * When host hooks record the same episode (Claude Code with hooks and
 * `ANTHROPIC_BASE_URL`, OpenCode's plugin with `install opencode
 * --gateway`), the hooks own messages and tool calls; the gateway adds the
 * model's side only, so nothing is recorded twice. One exception: Claude
 * Code's turn ends read no transcript with the gateway (`install
 * claude-code --gateway`), so its Stop hook gives the turn's last text
 * only; the gateway records the text of each answer that also calls tools
 * (the words between the calls) and a subagent's last answer (SubagentStop
 * gives no message), in an episode named by Claude Code's session id.
 *
 * A side call (`side_call.ts`: OpenCode's title call) is recorded in its
 * episode as a request and an answer marked `side_call`, its tokens with
 * the mark, and nothing of it as the conversation's.
 *
 * @module
 */
import type { UnsealedEvent } from "../trace/event.ts";
import type { EventContext } from "../trace/make_event.ts";
import { episodeStarted, message } from "../trace/episode_events.ts";
import { modelRequested, modelResponded } from "../trace/model_events.ts";
import {
  toolCallCompleted,
  toolCallFailed,
  toolCallStarted,
  toolsetExposed,
} from "../trace/tool_events.ts";
import { canonicalJson } from "../trace/canonical_json.ts";
import { sha256Hex } from "../trace/hash.ts";
import type { ConversationBook } from "./conversation_book.ts";
import type { ConversationEntry } from "./conversation_entry.ts";
import type { Identity } from "./episode_identity.ts";
import { extendPrefix } from "./message_hash.ts";
import type { ToolsetDigests } from "./toolset_digest.ts";
import { sideCallOf } from "./side_call.ts";
import { MAX_BODY_MESSAGES, recordedBody } from "./recorded_body.ts";
import { specOfWire } from "./wires/registry.ts";
import type {
  NormRequest,
  NormResponse,
  NormToolCall,
  NormToolResult,
} from "./wire_types.ts";

/** The value `payload.source` of the gateway's model events. */
export const GATEWAY_SOURCE = "model_gateway";

/** What a package did with an exchange (`model.requested.payload.package`). */
export interface PackageOutcome {
  /** The package, `name@digest`. */
  id: string;
  /**
   * `served` (the package answered itself), `forwarded` (went upstream
   * narrowed, its answer checked), `passed_through` (the package does not
   * fit: forwarded untouched), `gave_up` (refused three times, answered in
   * words) or `unchecked` (an answer it could not check: the client got
   * the API's error instead).
   */
  outcome: "served" | "forwarded" | "passed_through" | "gave_up" | "unchecked";
  /** Why it passed through, or what the refusals said. */
  reason?: string;
}

/** One exchange, as the recorder takes it. */
export interface Exchange {
  /** Capture to record into. */
  capture_id: string;
  /** Its episode and conversation, decided when the request arrived. */
  identity: Identity;
  /** The request as read. */
  request: NormRequest;
  /** The request body as parsed (kept as the request's record). */
  body: unknown;
  /** The answer as read, or null when there is none (an error). */
  response: NormResponse | null;
  /** Upstream status (0 when it never answered). */
  status: number;
  /** What went wrong, when the upstream failed (never holds credentials). */
  error?: { type: string; message: string } | null;
  /** The streamed answer ended before its final event. */
  incomplete?: boolean;
  /** When the request arrived. */
  started: Date;
  /** Milliseconds until the answer was complete. */
  duration_ms: number;
  /** Answered by a compiled package, not the model (its id). */
  served_by?: string | null;
  /** Answers of the model a package refused before this one (each asked again). */
  refused_attempts?: RefusedAttempt[];
  /** What the package at the request's route did with it. */
  package?: PackageOutcome;
}

/** An answer of the model whose state-changing calls a package refused. */
export interface RefusedAttempt {
  /** The answer. */
  response: NormResponse;
  /** The refused calls, and why. */
  refusals: { id: string; tool: string; reason: string }[];
  /** Upstream status. */
  status: number;
}

/** What the recorder needs besides the exchange. */
export interface RecordContext {
  /** The gateway's memory. */
  book: ConversationBook;
  /** Clock. @default () => new Date() */
  now?: () => Date;
  /**
   * Toolset digests remembered across exchanges (a recorder's own).
   * @default each digest worked out anew
   */
  toolsets?: ToolsetDigests;
  /**
   * Record the body whole but for its history (no long field left out as
   * the previous request's). @default false
   */
  wholeBodies?: boolean;
}

function resultValue(text: string): { result: unknown; result_text: string } {
  let result: unknown = text;
  const t = text.trim();
  if (t.startsWith("{") || t.startsWith("[")) {
    try {
      result = JSON.parse(t);
    } catch {
      // Kept as text.
    }
  }
  return { result, result_text: text };
}

/**
 * The events of one exchange (one capture), and the book moved on.
 *
 * @param ex The exchange.
 * @param rc The book and generators.
 * @returns Events in order, to be written with one write.
 */
export function exchangeEvents(
  ex: Exchange,
  rc: RecordContext,
): UnsealedEvent[] {
  const out: UnsealedEvent[] = [];
  for (const ev of exchangeEventStream(ex, rc)) {
    if (ev !== MAY_PAUSE) out.push(ev);
  }
  return out;
}

/**
 * What {@linkcode exchangeEventStream} gives between events where long
 * work (a long conversation's hashing) may yield to requests.
 */
export const MAY_PAUSE: unique symbol = Symbol("may pause");

/**
 * The events of one exchange, made one at a time (the book moved on as
 * they are made), with {@linkcode MAY_PAUSE} between them where long work
 * may yield: a large exchange is written in runs, the server's loop
 * answering between them.
 *
 * @param ex The exchange.
 * @param rc The book and generators.
 * @returns The events in order.
 */
export function* exchangeEventStream(
  ex: Exchange,
  rc: RecordContext,
): Generator<UnsealedEvent | typeof MAY_PAUSE, void, undefined> {
  const { book } = rc;
  const req = ex.request;
  const spec = specOfWire(req.wire);
  const cap = ex.capture_id;
  const id = ex.identity;
  const conv = id.conversation;
  const hashes = req.messages.map((m) => m.hash);
  const known = Math.min(id.known, req.messages.length);
  const episode = id.episode_id;
  const now = rc.now ?? (() => new Date());
  const ctx: EventContext = {
    captureId: cap,
    episodeId: episode,
    source: {
      host: GATEWAY_SOURCE,
      adapter: req.wire,
      model: ex.response?.model ?? req.model,
    },
    now,
  };
  const joined = book.hookEpisode(cap, episode);
  const side = sideCallOf(req, ex.body);
  // The conversation's messages and calls: the hooks' where they record
  // the episode; never a side call's.
  const content = !joined && side === null;
  const { state, isNew } = book.episode(cap, episode);
  const forked = id.forked_from
    ? {
      episode_id: id.forked_from.conversation.episode_id,
      request_event_id: id.forked_from.conversation.recorded.request_event_id,
      messages: id.forked_from.messages,
    }
    : null;
  if (isNew && !joined) {
    yield (episodeStarted(ctx, {
      reason: GATEWAY_SOURCE,
      wire: req.wire,
      ...(req.session_id ? { session_id: req.session_id } : {}),
      ...(forked ? { forked_from: forked } : {}),
    }, { timestamp: ex.started.toISOString() }));
  }
  if (req.tools.length > 0) {
    const digest = rc.toolsets?.digest(req.tools) ??
      sha256Hex(canonicalJson(req.tools));
    // Each toolset once per episode (a subagent has its own; they alternate).
    if (!state.toolsets.has(digest) && state.toolsets.size < 64) {
      state.toolsets.add(digest);
      yield (toolsetExposed(ctx, {
        tools: req.tools,
        origin: GATEWAY_SOURCE,
      }));
    }
  }
  // What is new: the messages after the part the conversation holds (an
  // assistant message that is the answer recorded last time is not).
  const fresh = req.messages.slice(known);
  const last = id.previous_answer;
  if (content) {
    for (const m of fresh) {
      if (m.role === "assistant") {
        const isAnswer = last !== null &&
          (m.tool_calls.length > 0
            ? m.tool_calls.every((c) => last.call_ids.includes(c.id))
            : m.text.replace(/\s+/g, "") === last.text);
        if (!isAnswer && m.text) {
          yield (message(ctx, {
            role: "assistant",
            text: m.text,
            history: true,
          }));
        }
        for (const call of m.tool_calls) {
          if (book.knowsCall(cap, episode, call.id)) continue;
          yield (started(ctx, book, call, true));
        }
      } else if (m.role === "user" || m.role === "tool") {
        for (const r of m.tool_results) {
          const ev = completion(ctx, book, r);
          if (ev) yield ev;
        }
        if (m.role === "user" && m.text) {
          yield (message(ctx, { role: "user", text: m.text }));
        }
      }
    }
  }
  const from = id.from;
  const head = yield* conversationHead(hashes, known, from);
  // The body as sent, but for the history the conversation's earlier
  // requests hold already (`messages_before` of its messages) and the long
  // fields the previous request had the same (`body_same_as_previous`).
  const recorded = recordedBody(ex.body, {
    known,
    historyKey: spec?.history.key,
    previous: from !== null && from.capture_id === cap
      ? from.recorded.fields ?? null
      : null,
    whole: rc.wholeBodies === true,
  });
  const requested = modelRequested(ctx, {
    request: {
      wire: req.wire,
      model: req.model,
      stream: req.stream,
      params: req.params,
      tools: req.tools.map((t) => t.name),
      messages: req.messages.length,
      new_messages: fresh.length,
      body: recorded.body,
      ...(known > 0 ? { messages_before: known } : {}),
      ...(recorded.same.length > 0
        ? { body_same_as_previous: recorded.same }
        : {}),
      ...(fresh.length > MAX_BODY_MESSAGES
        ? { body_messages_omitted: fresh.length }
        : {}),
    },
    conversation: {
      first: hashes[0] ?? null,
      head,
      continues: known,
      previous: from?.recorded.request_event_id ?? null,
      new_hashes: hashes.slice(known),
      ...(req.previous_response_id
        ? { previous_response_id: req.previous_response_id }
        : {}),
      ...(id.retry ? { retry: true } : {}),
      ...(forked ? { forked_from: forked } : {}),
    },
    ...(ex.package ? { package: ex.package } : {}),
    ...(side ? { side_call: side } : {}),
    source: GATEWAY_SOURCE,
  }, { actor: "runtime", timestamp: ex.started.toISOString() });
  yield requested;
  // A stream cut off: the client never got the whole answer, so neither
  // its words nor its calls are the conversation's.
  // Answers a package refused: the model's tokens and the refusals, each
  // once; the agent never saw them.
  for (const r of ex.refused_attempts ?? []) {
    yield (modelResponded(ctx, {
      response: {
        id: r.response.id,
        model: r.response.model,
        stop_reason: r.response.stop_reason,
        text: r.response.text,
        tool_calls: r.response.tool_calls.map((c) => c.name),
        tool_call_ids: r.response.tool_calls.map((c) => c.id),
        ...(r.response.usage ? { usage: r.response.usage } : {}),
      },
      status: r.status,
      source: GATEWAY_SOURCE,
      refused: r.refusals.map((x) => ({
        tool: x.tool,
        reason: x.reason,
        arguments: r.response.tool_calls.find((c) => c.id === x.id)
          ?.arguments ?? {},
      })),
    }, { parentEventId: requested.event_id }));
  }
  const res = ex.response;
  const whole = res !== null && !ex.incomplete;
  yield (modelResponded(ctx, {
    response: res
      ? {
        id: res.id,
        model: res.model,
        stop_reason: res.stop_reason,
        text: res.text,
        tool_calls: res.tool_calls.map((c) => c.name),
        tool_call_ids: res.tool_calls.map((c) => c.id),
        ...(res.usage && !side ? { usage: res.usage } : {}),
      }
      : null,
    ...(side
      ? { side_call: { ...side, ...(res?.usage ? { usage: res.usage } : {}) } }
      : {}),
    status: ex.status,
    duration_ms: ex.duration_ms,
    source: GATEWAY_SOURCE,
    ...(ex.error ? { error: ex.error } : {}),
    ...(ex.incomplete ? { incomplete: true } : {}),
    ...(ex.served_by ? { served_by: ex.served_by } : {}),
  }, { parentEventId: requested.event_id }));
  if (res && whole && content) {
    if (res.text) {
      yield (message(ctx, { role: "assistant", text: res.text }));
    }
    for (const call of res.tool_calls) {
      if (book.knowsCall(cap, episode, call.id)) continue;
      yield (started(ctx, book, call, false));
    }
  } else if (
    res && whole && joined && side === null &&
    id.named === "claude_code_session" && res.text &&
    (res.tool_calls.length > 0 || claudeSubagent(ex.body))
  ) {
    // Claude Code with the gateway: its Stop says only the turn's last
    // text (no transcript is read); the words between calls, and a
    // subagent's last words, are here.
    yield (message(ctx, { role: "assistant", text: res.text }));
  }
  conv.recorded = {
    request_event_id: requested.event_id,
    head,
    length: hashes.length,
    fields: recorded.fields,
  };
  if (res?.id && spec?.continues_by_id) {
    book.rememberResponse(conv, res.id);
  }
}

/**
 * Whether a Claude Code request is a subagent's: Claude Code says so in
 * the billing line it puts first in `system` (`cc_is_subagent=true`).
 */
function claudeSubagent(body: unknown): boolean {
  const system = typeof body === "object" && body !== null
    ? (body as { system?: unknown }).system
    : undefined;
  const first = Array.isArray(system) ? system[0] : system;
  const text = typeof first === "string"
    ? first
    : typeof first === "object" && first !== null
    ? (first as { text?: unknown }).text
    : null;
  return typeof text === "string" &&
    /^x-anthropic-billing-header:.*\bcc_is_subagent=true\b/.test(text);
}

/**
 * The prefix hash of a request's messages: from the head of the request it
 * continues when that request's messages are all known (only the new ones
 * are hashed), else from the first message.
 */
function* conversationHead(
  hashes: readonly string[],
  known: number,
  from: ConversationEntry | null,
): Generator<typeof MAY_PAUSE, string, undefined> {
  let head = "";
  let at = 0;
  const r = from?.recorded;
  if (r && r.head !== null && known === r.length) {
    head = r.head;
    at = known;
  }
  for (let i = at; i < hashes.length; i++) {
    head = extendPrefix(head, hashes[i]);
    // A long conversation's head: the writer may yield to requests.
    if ((i & 4095) === 4095) yield MAY_PAUSE;
  }
  return head;
}

function started(
  ctx: EventContext,
  book: ConversationBook,
  call: NormToolCall,
  history: boolean,
): UnsealedEvent {
  const ev = toolCallStarted(ctx, {
    tool: { host_name: call.name, logical_id: null },
    arguments: call.arguments,
    host_call_id: call.id,
    ...(call.arguments_text !== undefined
      ? { arguments_text: call.arguments_text }
      : {}),
    ...(history ? { history: true } : {}),
  });
  book.openCall(ctx.captureId, ctx.episodeId, call.id, {
    event_id: ev.event_id,
    name: call.name,
    arguments: call.arguments,
  });
  return ev;
}

function completion(
  ctx: EventContext,
  book: ConversationBook,
  r: NormToolResult,
): UnsealedEvent | null {
  const call = book.closeCall(ctx.captureId, ctx.episodeId, r.id);
  if (!call) return null;
  const base = {
    tool: { host_name: call.name, logical_id: null },
    arguments: call.arguments,
    host_call_id: r.id,
  };
  const opts = { parentEventId: call.event_id };
  // Chat wires have no error flag: a result that says `Error: …` failed
  // (the importers' rule).
  return r.is_error || /^Error:/.test(r.text)
    ? toolCallFailed(ctx, { ...base, error: { message: r.text } }, opts)
    : toolCallCompleted(ctx, { ...base, ...resultValue(r.text) }, opts);
}
