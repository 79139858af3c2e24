/**
 * The episode of a model request, decided when it arrives (before it is
 * forwarded, so every answer can say it in `x-harness-episode`).
 *
 * Ids a client sends win, in this order ({@linkcode clientEpisode}):
 *
 * 1. `x-harness-episode` (header);
 * 2. Claude Code's session id (`metadata.user_id`, JSON with `session_id`;
 *    its hooks use the same id);
 * 3. the Responses API's `previous_response_id` (the episode of that
 *    response) and `conversation` (its id);
 * 4. the session ids users of other gateways already send: Helicone's
 *    `Helicone-Session-Id` and OpenRouter's `x-session-id` (headers),
 *    LiteLLM's `litellm_session_id` (body, or in `metadata`), Langfuse's
 *    `session_id` in `metadata` (as LiteLLM passes it), OpenRouter's
 *    `session_id` (body).
 *
 * An id that is not a valid episode id (1-128 of `A-Z a-z 0-9 _ . -`), or
 * is the capture's own `_capture`, becomes `s_` and 40 hex digits of its
 * SHA-256.
 *
 * With no id, the conversation decides ({@linkcode identify}): a request
 * continues a conversation only when its messages begin with that
 * conversation's last request's messages *and the answer it got* (its text
 * and tool call ids, as the wire's reader reads them; `cache_control` and
 * other cache marks left out of the messages' hashes). What two
 * conversations share before they diverge never joins them: a request that
 * continues no conversation's end starts a new episode, linked by
 * `forked_from` to the conversation it shares the longest prefix with (when
 * that prefix holds a user message or a tool result, not only the openers
 * every conversation of an agent has). Each end is taken once: two runs
 * sending the same requests become two episodes as they proceed. A retry —
 * the same messages again after the last exchange failed (an upstream
 * error, a time-out, a client that went away, a cut stream) — stays in the
 * episode.
 *
 * @module
 */
import { sha256Hex } from "../trace/hash.ts";
import { isValidId } from "../trace/ids.ts";
import type { ConversationBook } from "./conversation_book.ts";
import {
  type AnswerKey,
  type ConversationEntry,
  pendingEnd,
} from "./conversation_entry.ts";
import { isObject, type NormMessage, type NormRequest } from "./wire_types.ts";

/** An episode id the client sent, and where. */
export interface ClientEpisode {
  /** The episode id (valid). */
  id: string;
  /** Where it came from (`x-harness-episode`, `claude_code_session`, …). */
  source: string;
}

/** What the gateway decided for one request. */
export interface Identity {
  /** The conversation the request is now the end of. */
  conversation: ConversationEntry;
  /** Its episode. */
  episode_id: string;
  /** Messages of the request the episode holds already (the rest are new). */
  known: number;
  /**
   * The conversation whose latest recorded request this one continues
   * (`conversation.previous`), or null.
   */
  from: ConversationEntry | null;
  /** The answer the continued request got (an assistant message repeating it is not new). */
  previous_answer: AnswerKey | null;
  /** A new episode's link to the conversation it shares the most with. */
  forked_from: { conversation: ConversationEntry; messages: number } | null;
  /** Where a client-sent id came from, or null (the conversation decided). */
  named: string | null;
  /** The same request again after the last exchange failed. */
  retry: boolean;
}

/**
 * An episode id from any string: itself when valid, else `s_` and 40 hex
 * digits of its SHA-256.
 *
 * @param raw What the client sent.
 * @returns A valid episode id.
 */
export function episodeIdOf(raw: string): string {
  // `_capture` is the capture's own annotations, never a client's episode.
  return isValidId(raw) && raw !== "_capture"
    ? raw
    : `s_${sha256Hex(raw).slice(0, 40)}`;
}

function text(v: unknown): string | null {
  return typeof v === "string" && v.trim() !== "" ? v.trim() : null;
}

/**
 * The episode a client names, in the documented order (the Responses API's
 * `previous_response_id` aside: {@linkcode identify} looks it up).
 *
 * @param header Reads one request header.
 * @param body The parsed request body.
 * @param request The request as read.
 * @returns The id and its source, or null.
 */
export function clientEpisode(
  header: (name: string) => string | null,
  body: Record<string, unknown>,
  request: NormRequest,
): { first: ClientEpisode | null; later: ClientEpisode | null } {
  const h = text(header("x-harness-episode"));
  if (h) {
    return {
      first: { id: episodeIdOf(h), source: "x-harness-episode" },
      later: null,
    };
  }
  if (request.session_id) {
    return {
      first: {
        id: episodeIdOf(request.session_id),
        source: "claude_code_session",
      },
      later: null,
    };
  }
  // After previous_response_id: the Responses API's conversation, then
  // other gateways' session ids.
  const conv = text(request.conversation);
  if (conv) {
    return {
      first: null,
      later: { id: episodeIdOf(conv), source: "responses_conversation" },
    };
  }
  const meta = isObject(body.metadata) ? body.metadata : {};
  const others: [string, string | null][] = [
    ["helicone-session-id", text(header("helicone-session-id"))],
    ["x-session-id", text(header("x-session-id"))],
    [
      "litellm_session_id",
      text(body.litellm_session_id) ?? text(meta.litellm_session_id),
    ],
    ["metadata.session_id", text(meta.session_id)],
    ["session_id", text(body.session_id)],
  ];
  for (const [source, v] of others) {
    if (v) return { first: null, later: { id: episodeIdOf(v), source } };
  }
  return { first: null, later: null };
}

/** The answer at `at` as the next request repeats it: assistant messages in a row. */
function repeatedAnswer(
  messages: readonly NormMessage[],
  at: number,
): { present: boolean; text: string; call_ids: string[] } {
  let present = false;
  let t = "";
  const ids: string[] = [];
  for (let i = at; i < messages.length; i++) {
    const m = messages[i];
    if (m.opaque) continue;
    if (m.role !== "assistant") break;
    present = true;
    t += m.text;
    for (const c of m.tool_calls) ids.push(c.id);
  }
  return { present, text: t.replace(/\s+/g, ""), call_ids: ids };
}

function sameIds(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  const s = new Set(a);
  return b.every((x) => s.has(x));
}

/** Whether `c`'s end is the first `k` of `hashes`. */
function endIsPrefix(
  c: ConversationEntry,
  hashes: readonly string[],
  k: number,
) {
  const h = c.hashes;
  if (h.length !== k) return false;
  // From the end back: conversations that differ differ late.
  for (let i = k - 1; i >= 0; i--) if (h[i] !== hashes[i]) return false;
  return true;
}

/** How a request stands to a conversation's end it begins with. */
function continues(
  book: ConversationBook,
  c: ConversationEntry,
  req: NormRequest,
  k: number,
): { answer: AnswerKey | null; retry: boolean } | null {
  const n = req.messages.length;
  const end = c.end;
  if (k === n) {
    // The same messages again: a retry only after a failure (after an
    // answer it is a regenerated turn; while in flight, a second run).
    return end.state === "failed" ? { answer: null, retry: true } : null;
  }
  const next = repeatedAnswer(req.messages, k);
  if (end.state === "failed") {
    // No answer reached the client: it went on without one.
    return next.present ? null : { answer: null, retry: false };
  }
  const ans = book.answerOf(c);
  if (ans === null) return null;
  if (!next.present) {
    // An empty answer the client left out.
    return ans.text === "" && ans.call_ids.length === 0
      ? { answer: ans, retry: false }
      : null;
  }
  const same = ans.call_ids.length > 0
    ? sameIds(ans.call_ids, next.call_ids)
    : next.call_ids.length === 0 && next.text === ans.text;
  return same ? { answer: ans, retry: false } : null;
}

/**
 * The conversation whose end this request continues: the longest end that
 * matches, the oldest of equals.
 */
function findEnd(
  book: ConversationBook,
  capture: string,
  req: NormRequest,
  hashes: readonly string[],
  only: string | null,
):
  | {
    c: ConversationEntry;
    k: number;
    answer: AnswerKey | null;
    retry: boolean;
  }
  | null {
  for (let k = hashes.length; k >= 1; k--) {
    const list = book.endingWith(capture, hashes[k - 1]);
    if (list.length === 0) continue;
    for (const c of list) {
      if (only !== null && c.episode_id !== only) continue;
      if (c.chained || !endIsPrefix(c, hashes, k)) continue;
      const how = continues(book, c, req, k);
      if (how) return { c, k, ...how };
    }
  }
  return null;
}

/**
 * The conversation sharing the longest prefix with `hashes` (the oldest of
 * equals), of candidates that share its first `from` messages already.
 */
function longestShared(
  candidates: readonly ConversationEntry[],
  hashes: readonly string[],
  from = 0,
): { c: ConversationEntry; shared: number } | null {
  let best: ConversationEntry | null = null;
  let most = 0;
  // The oldest of equals: the conversation the others forked from.
  for (const c of candidates) {
    const h = c.hashes;
    const max = Math.min(h.length, hashes.length);
    // Equal hashes are distinct strings compared in full: the known shared
    // part is skipped (every agent's conversations share a system prompt).
    let n = Math.min(from, max);
    while (n < max && h[n] === hashes[n]) n++;
    if (n > most) {
      best = c;
      most = n;
    }
  }
  return best ? { c: best, shared: most } : null;
}

/** What {@linkcode identify} needs. */
export interface IdentifyInput {
  /** The capture the request records into. */
  capture: string;
  /** The request as read. */
  request: NormRequest;
  /** Ids the client sent ({@linkcode clientEpisode}). */
  client: { first: ClientEpisode | null; later: ClientEpisode | null };
  /** New episode ids. @default () => `gw_<uuid>` */
  newEpisodeId?: () => string;
}

/**
 * Decide a request's episode and conversation, and make the request that
 * conversation's end (taken: no other request continues the same end).
 * The end belongs to the returned identity until it settles
 * (`ConversationBook.settle`).
 *
 * @param book The gateway's memory.
 * @param input Capture, request, client ids.
 * @returns The decision.
 */
export function identify(
  book: ConversationBook,
  input: IdentifyInput,
): Identity {
  const id = decide(book, input);
  id.conversation.end.owner = id;
  return id;
}

function decide(book: ConversationBook, input: IdentifyInput): Identity {
  const { capture, request: req } = input;
  const hashes = req.messages.map((m) => m.hash);
  const named = input.client.first;
  // previous_response_id: the conversation of that response.
  if (req.previous_response_id !== null) {
    let c = book.byResponse(capture, req.previous_response_id);
    if (c === null) {
      book.readAnswers(capture);
      c = book.byResponse(capture, req.previous_response_id);
    }
    if (c !== null && (named === null || named.id === c.episode_id)) {
      c.chained = true;
      book.advance(c, c.hashes, pendingEnd(null));
      return {
        conversation: c,
        episode_id: c.episode_id,
        known: 0,
        from: c,
        previous_answer: null,
        forked_from: null,
        named: named?.source ?? "previous_response_id",
        retry: false,
      };
    }
  }
  const client = named ?? input.client.later;
  if (client !== null) {
    return named_(book, input, hashes, client);
  }
  const found = findEnd(book, capture, req, hashes, null);
  if (found) {
    book.advance(found.c, hashes, pendingEnd(null));
    return {
      conversation: found.c,
      episode_id: found.c.episode_id,
      known: found.k,
      from: found.c,
      previous_answer: found.answer,
      forked_from: null,
      named: null,
      retry: found.retry,
    };
  }
  // A new episode, linked to the conversation it shares the most with
  // when that is more than the openers (a user message or a result).
  const opener = req.messages.findIndex((m) =>
    m.role === "user" || m.role === "tool"
  );
  const near = hashes.length > 0
    ? longestShared(book.startingWith(capture, hashes[0]), hashes, 1)
    : null;
  const episode = (input.newEpisodeId ?? (() => `gw_${crypto.randomUUID()}`))();
  const conversation = book.add(fresh(capture, episode, hashes));
  return {
    conversation,
    episode_id: episode,
    known: 0,
    from: null,
    previous_answer: null,
    forked_from: near && opener >= 0 && near.shared > opener
      ? { conversation: near.c, messages: near.shared }
      : null,
    named: null,
    retry: false,
  };
}

function fresh(
  capture: string,
  episode: string,
  hashes: string[],
): ConversationEntry {
  return {
    capture_id: capture,
    episode_id: episode,
    hashes,
    end: pendingEnd(null),
    recorded: { request_event_id: null, head: null, length: 0 },
  };
}

/** An episode the client named: its conversations decide which one goes on. */
function named_(
  book: ConversationBook,
  input: IdentifyInput,
  hashes: string[],
  client: ClientEpisode,
): Identity {
  const { capture, request: req } = input;
  const episode = client.id;
  const base = { episode_id: episode, forked_from: null, named: client.source };
  const found = findEnd(book, capture, req, hashes, episode);
  if (found) {
    book.advance(found.c, hashes, pendingEnd(null));
    return {
      ...base,
      conversation: found.c,
      known: found.k,
      from: found.c,
      previous_answer: found.answer,
      retry: found.retry,
    };
  }
  const near = longestShared(
    book.ofEpisode(capture, episode).filter((c) => !c.chained),
    hashes,
  );
  if (near && near.shared === near.c.hashes.length) {
    // It holds the whole end (the answer changed, or the request repeats
    // one in flight): the same conversation goes on.
    const answer = book.answerOf(near.c);
    book.advance(near.c, hashes, pendingEnd(null));
    return {
      ...base,
      conversation: near.c,
      known: near.shared,
      from: near.c,
      previous_answer: answer,
      retry: false,
    };
  }
  // A branch in the episode (an edited history, a compaction, a subagent):
  // only what it does not share with the episode is new.
  const c = book.add(fresh(capture, episode, hashes));
  return {
    ...base,
    conversation: c,
    known: near?.shared ?? 0,
    from: near?.c ?? null,
    previous_answer: null,
    retry: false,
  };
}
