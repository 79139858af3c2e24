/**
 * {@linkcode ConversationBook}: what the gateway remembers of the
 * conversations it saw, so that each request records only what is new since
 * the conversation's previous request (a client sends the whole history
 * every time), and each tool result finds the call it answers.
 *
 * A conversation is found by its first message's hash (and, when the
 * request names one, its episode); of the conversations found, the one
 * sharing the longest prefix of messages with the request continues. A
 * request that extends a conversation moves it on; one that departs from it
 * (an edited or compacted history) starts a branch beside it. Everything is
 * bounded (least recently used dropped first) and rebuilt from the spools
 * after a restart (`restore.ts`). Per process, never module state.
 *
 * @module
 */

/** One conversation as last seen. */
export interface Conversation {
  /** Capture it records into. */
  capture_id: string;
  /** Episode it records into. */
  episode_id: string;
  /** Hashes of the messages of its latest request. */
  hashes: string[];
  /**
   * The prefix hash of all of `hashes` (`extendPrefix` over them), so that
   * a request extending the conversation hashes only its new messages;
   * absent, it is computed from `hashes`.
   */
  head?: string;
  /**
   * The answer to that request as recorded (its text and call ids): the
   * assistant message in the next request that matches it is not new.
   */
  answer: { text: string; call_ids: string[] } | null;
  /** The `model.requested` event of its latest request (a later one points back to it). */
  request_event_id: string | null;
}

/** A tool call waiting for its result. */
export interface PendingCall {
  /** Its `tool.call.started` event. */
  event_id: string;
  /** Tool name. */
  name: string;
  /** Arguments as recorded. */
  arguments: Record<string, unknown>;
}

/** What a request continues. */
export interface Continuation {
  /** The conversation, or null for a new one. */
  conversation: Conversation | null;
  /** Messages of the request it already holds (the rest are new). */
  known: number;
}

/** Bounds of the book. */
export interface ConversationBookOptions {
  /** Conversations kept. @default 4096 */
  maxConversations?: number;
  /**
   * Conversations kept per first message. Every conversation of an agent
   * starts with the same system prompt, so this bounds how many of them
   * can run at once and still be told apart (past it, the oldest one's next
   * request starts a new episode and records its history again).
   * @default 256
   */
  maxPerFirstMessage?: number;
  /** Pending calls, answered call ids and episodes kept. @default 65536 */
  maxEntries?: number;
}

/** A map that forgets its least recently used entries. */
class Lru<V> {
  readonly #map = new Map<string, V>();
  readonly #cap: number;
  constructor(cap: number) {
    this.#cap = cap;
  }
  get(k: string): V | undefined {
    const v = this.#map.get(k);
    if (v !== undefined) {
      this.#map.delete(k);
      this.#map.set(k, v);
    }
    return v;
  }
  has(k: string): boolean {
    return this.#map.has(k);
  }
  set(k: string, v: V): void {
    this.#map.delete(k);
    this.#map.set(k, v);
    while (this.#map.size > this.#cap) {
      this.#map.delete(this.#map.keys().next().value as string);
    }
  }
  delete(k: string): boolean {
    return this.#map.delete(k);
  }
  get size(): number {
    return this.#map.size;
  }
}

const key = (...parts: string[]) => parts.join("\u0000");

/** The gateway's memory of conversations, calls and episodes. */
export class ConversationBook {
  readonly #byFirst: Lru<Conversation[]>;
  readonly #byResponse: Lru<Conversation>;
  readonly #pending: Lru<PendingCall>;
  readonly #answered: Lru<true>;
  readonly #episodes: Lru<{ toolsets: Set<string> }>;
  readonly #hookEpisodes: Lru<true>;
  readonly #perFirst: number;

  /**
   * Create a `ConversationBook`.
   *
   * @param options Bounds.
   */
  constructor(options: ConversationBookOptions = {}) {
    const conv = options.maxConversations ?? 4096;
    const n = options.maxEntries ?? 65536;
    this.#byFirst = new Lru(conv);
    this.#byResponse = new Lru(conv);
    this.#pending = new Lru(n);
    this.#answered = new Lru(n);
    this.#episodes = new Lru(n);
    this.#hookEpisodes = new Lru(n);
    this.#perFirst = options.maxPerFirstMessage ?? 256;
  }

  /**
   * The conversation a request continues.
   *
   * @param capture Its capture.
   * @param hashes Its messages' hashes.
   * @param episode The episode the request names (header, session), if any.
   * @returns The conversation sharing the longest prefix, and that length.
   */
  continuation(
    capture: string,
    hashes: readonly string[],
    episode: string | null,
  ): Continuation {
    if (hashes.length === 0) return { conversation: null, known: 0 };
    const list = this.#byFirst.get(key(capture, hashes[0])) ?? [];
    let best: Conversation | null = null;
    let bestLength = 0;
    for (let i = list.length - 1; i >= 0; i--) {
      const c = list[i];
      if (episode !== null && c.episode_id !== episode) continue;
      let n = 0;
      const max = Math.min(c.hashes.length, hashes.length);
      while (n < max && c.hashes[n] === hashes[n]) n++;
      if (n > bestLength) {
        best = c;
        bestLength = n;
      }
    }
    return { conversation: best, known: bestLength };
  }

  /**
   * The conversation a Responses request continues by
   * `previous_response_id`.
   *
   * @param capture Its capture.
   * @param responseId The previous response's id.
   * @returns The conversation, or null.
   */
  byResponse(capture: string, responseId: string): Conversation | null {
    return this.#byResponse.get(key(capture, responseId)) ?? null;
  }

  /**
   * Remember a request: it moves its conversation on when it extends it,
   * else it starts a branch (or a new conversation).
   *
   * @param from The conversation it continued (null for none).
   * @param seen The request's conversation now.
   * @returns The conversation as remembered.
   */
  remember(from: Conversation | null, seen: Conversation): Conversation {
    const extends_ = from !== null &&
      from.capture_id === seen.capture_id &&
      from.episode_id === seen.episode_id &&
      from.hashes.length <= seen.hashes.length &&
      from.hashes.every((h, i) => seen.hashes[i] === h);
    if (extends_ && from) {
      from.hashes = seen.hashes;
      from.head = seen.head;
      from.answer = seen.answer;
      from.request_event_id = seen.request_event_id;
      return from;
    }
    if (seen.hashes.length === 0) return seen;
    const k = key(seen.capture_id, seen.hashes[0]);
    const list = this.#byFirst.get(k) ?? [];
    list.push(seen);
    if (list.length > this.#perFirst) list.shift();
    this.#byFirst.set(k, list);
    return seen;
  }

  /**
   * Remember the answer a Responses conversation may continue from.
   *
   * @param c The conversation.
   * @param responseId The answer's id.
   */
  rememberResponse(c: Conversation, responseId: string): void {
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

  /** Counts, for `/health`. */
  get sizes(): { pending_calls: number; episodes: number } {
    return { pending_calls: this.#pending.size, episodes: this.#episodes.size };
  }
}
