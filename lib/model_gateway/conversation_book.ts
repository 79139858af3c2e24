/**
 * {@linkcode ConversationBook}: what the gateway remembers of the
 * conversations it saw, so that each request is given its episode when it
 * arrives, records only what is new since the conversation's previous
 * request (a client sends the whole history every time), and each tool
 * result finds the call it answers.
 *
 * A conversation is remembered by its *end*: the messages of its last
 * request and the answer that request got. A request continues a
 * conversation only when its messages begin with that end, answer
 * included (`episode_identity.ts` decides; the answer is compared as the
 * wire's reader reads it: text and tool call ids). Each end is taken once:
 * the request that continues a conversation becomes its end at once, before
 * it is forwarded. Ends are found by the hash of their last message; the
 * conversation sharing the longest prefix with a request (the link of a
 * fork) by the hash of the first. Everything is bounded (least recently
 * used dropped first) and rebuilt from the spools after a restart
 * (`restore.ts`). Per process, never module state.
 *
 * @module
 */
import type { NormResponse } from "./wire_types.ts";
import {
  type AnswerKey,
  answerKey,
  type ConversationEnd,
  type ConversationEntry,
  type PendingCall,
} from "./conversation_entry.ts";
import { Lru } from "./lru.ts";

/** Bounds of the book. */
export interface ConversationBookOptions {
  /** Conversations kept. @default 4096 */
  maxConversations?: number;
  /**
   * Conversations kept per first message. Every conversation of an agent
   * starts with the same system prompt, so this bounds how many of them
   * can run at once and still be told apart (past it, the oldest one is
   * forgotten: its next request starts a new episode, linked to the
   * conversation it shares the most with, and records its history again).
   * @default 256
   */
  maxPerFirstMessage?: number;
  /** Conversations kept per named episode. @default 64 */
  maxPerEpisode?: number;
  /** Pending calls, answered call ids and episodes kept. @default 65536 */
  maxEntries?: number;
  /**
   * Message hashes kept over all conversations (each ~100 bytes: a 64-digit
   * hex string and its slot): memory bounded in bytes, not only by count,
   * since one conversation may hold 200,000 messages. Past it, the least
   * recently used conversations are forgotten (their next request starts a
   * new episode, linked to the conversation it shares the most with).
   * @default 524288 (about 50 MB)
   */
  maxMessages?: number;
}

const key = (...parts: string[]) => parts.join("\u0000");

/** The indexes of one capture's conversations. */
interface CaptureIndex {
  /** Last message's hash → conversations whose end ends with it. */
  byLast: Map<string, ConversationEntry[]>;
  /** First message's hash → conversations (oldest first). */
  byFirst: Map<string, ConversationEntry[]>;
  /** Episode → its conversations (oldest first). */
  byEpisode: Map<string, ConversationEntry[]>;
}

function addTo<K>(
  m: Map<K, ConversationEntry[]>,
  k: K,
  c: ConversationEntry,
): void {
  const list = m.get(k);
  if (list) list.push(c);
  else m.set(k, [c]);
}

function removeFrom<K>(
  m: Map<K, ConversationEntry[]>,
  k: K,
  c: ConversationEntry,
): void {
  const list = m.get(k);
  if (!list) return;
  const i = list.indexOf(c);
  if (i >= 0) list.splice(i, 1);
  if (list.length === 0) m.delete(k);
}

/** The gateway's memory of conversations, calls and episodes. */
export class ConversationBook {
  readonly #captures = new Map<string, CaptureIndex>();
  /** Every conversation, least recently used first. */
  readonly #recent = new Set<ConversationEntry>();
  readonly #byResponse: Lru<ConversationEntry>;
  readonly #pending: Lru<PendingCall>;
  readonly #answered: Lru<true>;
  readonly #episodes: Lru<{ toolsets: Set<string> }>;
  readonly #hookEpisodes: Lru<true>;
  readonly #max: number;
  readonly #perFirst: number;
  readonly #perEpisode: number;
  readonly #maxMessages: number;
  /** Message hashes held by conversations not dropped. */
  #messages = 0;

  /**
   * Create a `ConversationBook`.
   *
   * @param options Bounds.
   */
  constructor(options: ConversationBookOptions = {}) {
    this.#max = options.maxConversations ?? 4096;
    const n = options.maxEntries ?? 65536;
    this.#byResponse = new Lru(this.#max);
    this.#pending = new Lru(n);
    this.#answered = new Lru(n);
    this.#episodes = new Lru(n);
    this.#hookEpisodes = new Lru(n);
    this.#perFirst = options.maxPerFirstMessage ?? 256;
    this.#perEpisode = options.maxPerEpisode ?? 64;
    this.#maxMessages = options.maxMessages ?? 524_288;
  }

  /** Forget the least recently used conversations while over the bound of messages. */
  #trim(): void {
    while (this.#messages > this.#maxMessages && this.#recent.size > 0) {
      this.drop(this.#recent.values().next().value as ConversationEntry);
    }
  }

  #index(capture: string): CaptureIndex {
    let ix = this.#captures.get(capture);
    if (!ix) {
      ix = { byLast: new Map(), byFirst: new Map(), byEpisode: new Map() };
      this.#captures.set(capture, ix);
    }
    return ix;
  }

  /**
   * The conversations whose end's last message has this hash.
   *
   * @param capture Capture.
   * @param lastHash The hash.
   * @returns Them (do not change the list).
   */
  endingWith(capture: string, lastHash: string): readonly ConversationEntry[] {
    return this.#captures.get(capture)?.byLast.get(lastHash) ?? [];
  }

  /**
   * The conversations whose first message has this hash.
   *
   * @param capture Capture.
   * @param firstHash The hash.
   * @returns Them, oldest first (do not change the list).
   */
  startingWith(
    capture: string,
    firstHash: string,
  ): readonly ConversationEntry[] {
    return this.#captures.get(capture)?.byFirst.get(firstHash) ?? [];
  }

  /**
   * The conversations of an episode.
   *
   * @param capture Capture.
   * @param episode Episode.
   * @returns Them, oldest first (do not change the list).
   */
  ofEpisode(capture: string, episode: string): readonly ConversationEntry[] {
    return this.#captures.get(capture)?.byEpisode.get(episode) ?? [];
  }

  /**
   * Start remembering a conversation.
   *
   * @param c The conversation (its hashes, end and recorded state set).
   * @returns The same conversation.
   */
  add(c: ConversationEntry): ConversationEntry {
    const ix = this.#index(c.capture_id);
    if (c.hashes.length > 0) {
      addTo(ix.byLast, c.hashes[c.hashes.length - 1], c);
      const first = c.hashes[0];
      addTo(ix.byFirst, first, c);
      const same = ix.byFirst.get(first)!;
      if (same.length > this.#perFirst) this.drop(same[0]);
    }
    addTo(ix.byEpisode, c.episode_id, c);
    const mine = ix.byEpisode.get(c.episode_id)!;
    if (mine.length > this.#perEpisode) this.drop(mine[0]);
    this.#recent.add(c);
    this.#messages += c.hashes.length;
    while (this.#recent.size > this.#max) {
      this.drop(this.#recent.values().next().value as ConversationEntry);
    }
    this.#trim();
    return c;
  }

  /**
   * Move a conversation's end to a new request's messages.
   *
   * @param c The conversation.
   * @param hashes The request's messages' hashes.
   * @param end Its state.
   */
  advance(c: ConversationEntry, hashes: string[], end: ConversationEnd): void {
    c.end = end;
    this.touch(c);
    if (c.dropped) return;
    const ix = this.#index(c.capture_id);
    const before = c.hashes;
    const lastBefore = before.length ? before[before.length - 1] : null;
    const lastNow = hashes.length ? hashes[hashes.length - 1] : null;
    if (before.length === 0 && hashes.length > 0) {
      addTo(ix.byFirst, hashes[0], c);
    }
    if (lastBefore !== lastNow || before.length !== hashes.length) {
      if (lastBefore !== null) removeFrom(ix.byLast, lastBefore, c);
      if (lastNow !== null) addTo(ix.byLast, lastNow, c);
    }
    this.#messages += hashes.length - before.length;
    c.hashes = hashes;
    this.#trim();
  }

  /**
   * Add messages to a conversation's end in place (restoring from a spool:
   * each request costs its new messages, never a copy of the history).
   *
   * @param c The conversation.
   * @param more The new messages' hashes.
   */
  append(c: ConversationEntry, more: readonly string[]): void {
    this.touch(c);
    if (c.dropped || more.length === 0) return;
    const ix = this.#index(c.capture_id);
    const h = c.hashes;
    if (h.length > 0) removeFrom(ix.byLast, h[h.length - 1], c);
    else addTo(ix.byFirst, more[0], c);
    for (const x of more) h.push(x);
    addTo(ix.byLast, h[h.length - 1], c);
    this.#messages += more.length;
    this.#trim();
  }

  /**
   * Mark a conversation used (the least recently used are dropped first).
   *
   * @param c The conversation.
   */
  touch(c: ConversationEntry): void {
    if (c.dropped) return;
    this.#recent.delete(c);
    this.#recent.add(c);
  }

  /**
   * Forget a conversation (bounds).
   *
   * @param c The conversation.
   */
  drop(c: ConversationEntry): void {
    if (c.dropped) return;
    c.dropped = true;
    this.#recent.delete(c);
    const ix = this.#captures.get(c.capture_id);
    if (!ix) {
      this.#messages -= c.hashes.length;
      c.hashes = [];
      return;
    }
    if (c.hashes.length > 0) {
      removeFrom(ix.byLast, c.hashes[c.hashes.length - 1], c);
      removeFrom(ix.byFirst, c.hashes[0], c);
    }
    removeFrom(ix.byEpisode, c.episode_id, c);
    this.#messages -= c.hashes.length;
    c.hashes = [];
    c.end = { state: "failed", answer: null, read: null, owner: null };
  }

  /**
   * Settle a conversation's end when it still belongs to the exchange.
   *
   * @param c The conversation.
   * @param owner The exchange.
   * @param settled The new state, and the answer or its reader.
   */
  settle(
    c: ConversationEntry,
    owner: object,
    settled: {
      state: "answered" | "failed";
      answer?: AnswerKey | null;
      read?: (() => NormResponse | null) | null;
    },
  ): void {
    if (c.end.owner !== owner) return;
    c.end = {
      state: settled.state,
      answer: settled.answer ?? null,
      read: settled.state === "answered" ? settled.read ?? null : null,
      owner,
    };
  }

  /**
   * The answer of a conversation's end, read now if it was not.
   *
   * @param c The conversation.
   * @returns The answer, or null (none, or not readable).
   */
  answerOf(c: ConversationEntry): AnswerKey | null {
    const end = c.end;
    if (end.answer !== null) return end.answer;
    if (end.read === null) return null;
    const res = end.read();
    if (res === null) return null;
    const k = answerKey(res.text, res.tool_calls.map((t) => t.id));
    // A stream in flight may grow: only a finished answer is kept.
    if (end.state === "answered") {
      end.answer = k;
      end.read = null;
      if (res.id) this.rememberResponse(c, res.id);
    }
    return k;
  }

  /**
   * The conversation a Responses request continues by
   * `previous_response_id`.
   *
   * @param capture Its capture.
   * @param responseId The previous response's id.
   * @returns The conversation, or null.
   */
  byResponse(capture: string, responseId: string): ConversationEntry | null {
    const c = this.#byResponse.get(key(capture, responseId)) ?? null;
    return c && !c.dropped ? c : null;
  }

  /**
   * Read every answered end of a capture not read yet (a Responses
   * request names an answer whose id is known only once it is read).
   *
   * @param capture The capture.
   */
  readAnswers(capture: string): void {
    const ix = this.#captures.get(capture);
    if (!ix) return;
    for (const list of ix.byEpisode.values()) {
      for (const c of list) {
        if (c.end.state === "answered" && c.end.read) this.answerOf(c);
      }
    }
  }

  /**
   * Remember the answer a Responses conversation may continue from.
   *
   * @param c The conversation.
   * @param responseId The answer's id.
   */
  rememberResponse(c: ConversationEntry, responseId: string): void {
    this.#byResponse.set(key(c.capture_id, responseId), c);
  }

  /**
   * A call the model made, waiting for its result.
   *
   * @param capture Capture.
   * @param episode Episode.
   * @param callId The wire's call id.
   * @param call Its event and tool.
   */
  openCall(
    capture: string,
    episode: string,
    callId: string,
    call: PendingCall,
  ): void {
    this.#pending.set(key(capture, episode, callId), call);
  }

  /**
   * Whether a call was already recorded (started, or answered).
   *
   * @param capture Capture.
   * @param episode Episode.
   * @param callId The wire's call id.
   * @returns True when it was.
   */
  knowsCall(capture: string, episode: string, callId: string): boolean {
    const k = key(capture, episode, callId);
    return this.#pending.has(k) || this.#answered.has(k);
  }

  /**
   * Take the call a result answers (once: the result is then recorded).
   *
   * @param capture Capture.
   * @param episode Episode.
   * @param callId The call id the result names.
   * @returns The call, or null when it is not pending (unknown, or answered already).
   */
  closeCall(
    capture: string,
    episode: string,
    callId: string,
  ): PendingCall | null {
    const k = key(capture, episode, callId);
    const call = this.#pending.get(k) ?? null;
    if (call) {
      this.#pending.delete(k);
      this.#answered.set(k, true);
    }
    return call;
  }

  /**
   * Whether a result was recorded for a call already.
   *
   * @param capture Capture.
   * @param episode Episode.
   * @param callId The call id.
   * @returns True when it was.
   */
  answered(capture: string, episode: string, callId: string): boolean {
    return this.#answered.has(key(capture, episode, callId));
  }

  /**
   * Mark a call answered (restoring from a spool).
   *
   * @param capture Capture.
   * @param episode Episode.
   * @param callId The call id.
   */
  markAnswered(capture: string, episode: string, callId: string): void {
    const k = key(capture, episode, callId);
    this.#pending.delete(k);
    this.#answered.set(k, true);
  }

  /**
   * The episode's state, made on first sight.
   *
   * @param capture Capture.
   * @param episode Episode.
   * @returns Its state, and whether it was new.
   */
  episode(
    capture: string,
    episode: string,
  ): { state: { toolsets: Set<string> }; isNew: boolean } {
    const k = key(capture, episode);
    const had = this.#episodes.get(k);
    if (had) return { state: had, isNew: false };
    const state = { toolsets: new Set<string>() };
    this.#episodes.set(k, state);
    return { state, isNew: true };
  }

  /**
   * Note that host hooks record this episode (the gateway then records the
   * model's side only: requests, answers and tokens).
   *
   * @param capture Capture.
   * @param episode Episode.
   */
  noteHookEpisode(capture: string, episode: string): void {
    this.#hookEpisodes.set(key(capture, episode), true);
  }

  /**
   * Whether host hooks record this episode.
   *
   * @param capture Capture.
   * @param episode Episode.
   * @returns True when they do.
   */
  hookEpisode(capture: string, episode: string): boolean {
    return this.#hookEpisodes.has(key(capture, episode));
  }

  /** Counts, for `/health` and tests. */
  get sizes(): {
    pending_calls: number;
    episodes: number;
    conversations: number;
    messages: number;
  } {
    return {
      pending_calls: this.#pending.size,
      episodes: this.#episodes.size,
      conversations: this.#recent.size,
      messages: this.#messages,
    };
  }
}
