/**
 * What an ingest server remembers about hook sessions between payloads,
 * beside the correlator: a host_b model answer streamed in chunks (each
 * AfterModel carries a piece; the assembled text is the reliable one — the
 * host's own `prompt_response` repeats pieces), the model last asked, and
 * sessions already ended (hosts may send SessionEnd twice), which
 * Agent/Task call started each subagent, and, for a child session (host_c),
 * the call that started it. Bounded: the oldest sessions are forgotten
 * first. After a restart the ingest server gives the links back from the
 * spools (`lib/ingest/resume.ts`).
 *
 * @module
 */

interface SessionState {
  text: string;
  model: string | null;
  ended: boolean;
  answered: boolean;
  /** Subagent (host_a agent id, host_c child session) → its call's start event. */
  subagents: Map<string, string>;
  /** host_a: an answer recorded from a hook whose transcript turn was not read yet. */
  held: string | null;
  /** A child session: the start event of the call in its parent that started it. */
  startedBy: string | null;
}

/** Per-session memory of one ingest process. */
export class SessionMemory {
  readonly #sessions = new Map<string, SessionState>();
  readonly #max: number;

  /**
   * Create a `SessionMemory`.
   *
   * @param options Most sessions remembered.
   */
  constructor(options: { maxSessions?: number } = {}) {
    this.#max = options.maxSessions ?? 10_000;
  }

  #get(host: string, session: string): SessionState {
    const key = `${host}\u0000${session}`;
    let s = this.#sessions.get(key);
    if (!s) {
      s = {
        text: "",
        model: null,
        ended: false,
        answered: false,
        subagents: new Map(),
        held: null,
        startedBy: null,
      };
      this.#sessions.set(key, s);
      if (this.#sessions.size > this.#max) {
        this.#sessions.delete(this.#sessions.keys().next().value!);
      }
    }
    return s;
  }

  /** Add a streamed piece of the model's answer. */
  appendText(host: string, session: string, chunk: string): void {
    this.#get(host, session).text += chunk;
  }

  /** The answer assembled so far, and start the next one. */
  takeText(host: string, session: string): string {
    const s = this.#get(host, session);
    const text = s.text;
    s.text = "";
    if (text) s.answered = true;
    return text;
  }

  /**
   * Whether assistant text was taken since the last call, and reset.
   *
   * @param host Host name.
   * @param session Session id.
   * @returns True when the turn's answer was already recorded.
   */
  takeAnswered(host: string, session: string): boolean {
    const s = this.#get(host, session);
    const was = s.answered;
    s.answered = false;
    return was;
  }

  /** Remember the model a session asked. */
  setModel(host: string, session: string, model: string | null): void {
    if (model) this.#get(host, session).model = model;
  }

  /** The model a session last asked, if known. */
  model(host: string, session: string): string | null {
    return this.#sessions.get(`${host}\u0000${session}`)?.model ?? null;
  }

  /**
   * Remember which call started a subagent.
   *
   * @param ref The subagent: host, the session that started it, and the
   *   subagent (host_a's `agent_id`, host_c's child session id).
   * @param callEventId Event id of the call's `tool.call.started`.
   */
  linkSubagent(
    ref: { host: string; session: string; agent: string },
    callEventId: string,
  ): void {
    this.#get(ref.host, ref.session).subagents.set(ref.agent, callEventId);
  }

  /**
   * The start event of the call that started a subagent, if linked.
   *
   * @param ref The subagent: host, the session that started it, the subagent.
   * @returns The event id, or null.
   */
  subagentCall(
    ref: { host: string; session: string; agent: string },
  ): string | null {
    return this.#sessions.get(`${ref.host}\u0000${ref.session}`)?.subagents
      .get(ref.agent) ?? null;
  }

  /**
   * Remember the call that started a child session (host_c's subagent):
   * the child's own events point to it.
   *
   * @param host Host name.
   * @param session The child session.
   * @param callEventId Event id of the call's `tool.call.started`.
   */
  setStartedBy(host: string, session: string, callEventId: string): void {
    this.#get(host, session).startedBy = callEventId;
  }

  /**
   * The start event of the call that started a child session, if linked.
   *
   * @param host Host name.
   * @param session The child session.
   * @returns The event id, or null (not a child, or not linked).
   */
  startedBy(host: string, session: string): string | null {
    return this.#sessions.get(`${host}\u0000${session}`)?.startedBy ?? null;
  }

  /**
   * Start events of the calls already linked to a subagent in a session.
   *
   * @param host Host name.
   * @param session Session id.
   * @returns Their event ids.
   */
  linkedCalls(host: string, session: string): Set<string> {
    const s = this.#sessions.get(`${host}\u0000${session}`);
    return new Set(s ? s.subagents.values() : []);
  }

  /**
   * Hold an answer recorded from a hook (host_a's `last_assistant_message`)
   * whose transcript turn was not in what was read: a later read gives that
   * turn, whose text is then not recorded a second time.
   *
   * @param host Host name.
   * @param session Session id.
   * @param text The answer, or null to hold none.
   */
  holdAnswer(host: string, session: string, text: string | null): void {
    this.#get(host, session).held = text;
  }

  /**
   * The answer held for a later read, and hold none.
   *
   * @param host Host name.
   * @param session Session id.
   * @returns The text, or null.
   */
  takeHeldAnswer(host: string, session: string): string | null {
    const s = this.#sessions.get(`${host}\u0000${session}`);
    const text = s?.held ?? null;
    if (s) s.held = null;
    return text;
  }

  /** A session (re)started: it may end again. */
  started(host: string, session: string): void {
    this.#get(host, session).ended = false;
  }

  /**
   * Mark a session ended.
   *
   * @returns False when it had ended already (a duplicate end).
   */
  end(host: string, session: string): boolean {
    const s = this.#get(host, session);
    if (s.ended) return false;
    s.ended = true;
    return true;
  }
}
