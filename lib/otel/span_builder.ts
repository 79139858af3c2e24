/**
 * {@linkcode OtlpSpanBuilder}: a capture's events to OTLP spans, one event
 * at a time, so a whole-capture export and a live stream build the same
 * spans.
 *
 * @module
 */
import type { TraceEvent } from "../trace/event.ts";
import {
  clip,
  derivedId,
  int,
  nanos,
  type OtlpSpan,
  str,
} from "./otlp_types.ts";
import {
  chatSpan,
  endToolSpan,
  type GenAiMessage,
  incomplete,
  providerOf,
  rootSpan,
  setOutcome,
  toolSpan,
} from "./_spans.ts";

/** Options of an {@linkcode OtlpSpanBuilder}. */
export interface OtlpSpanBuilderOptions {
  /** Longest argument or result value kept, in characters. @default 8192 */
  maxValueChars?: number;
  /**
   * Episodes whose root span is held open at once; past it the oldest root
   * is finished early (its later spans still name it as parent).
   * @default Infinity
   */
  maxOpenEpisodes?: number;
  /**
   * Tool calls held open (started, not completed) at once; past it the
   * oldest is finished early as incomplete.
   * @default Infinity
   */
  maxOpenCalls?: number;
}

/** Finished episodes remembered (so late events do not open a second root). */
const CLOSED_EPISODES_KEPT = 100_000;
/** Finished roots kept, so a late outcome re-sends its root with it. */
const CLOSED_ROOTS_KEPT = 1_000;
/** Messages kept on one root span; later ones are counted, not kept. */
const MAX_ROOT_MESSAGES = 512;

interface OpenEpisode {
  traceId: string;
  rootId: string;
  root: OtlpSpan;
  /** Timestamp of its latest event (the root's end, set when it finishes). */
  last: string;
  /** Sequence of its first event seen. */
  first: number;
  input: { msg: GenAiMessage; seq: number }[];
  output: { msg: GenAiMessage; seq: number }[];
  droppedMessages: number;
  provider: string | null;
}

interface OpenCall {
  span: OtlpSpan;
  seq: number;
}

/**
 * Builds spans event by event, for a whole capture or a live stream: a
 * chat span as soon as the model responded, a tool span when its call
 * completes or fails, an episode's root span when the episode finishes or
 * gets its outcome (or at {@linkcode OtlpSpanBuilder.finish}); an outcome
 * marked after the episode finished sends its root again with it. Ids are
 * derived from event ids, so a stream and a whole-capture export give the
 * same spans.
 */
export class OtlpSpanBuilder {
  readonly #captureId: string;
  readonly #max: number;
  readonly #maxEpisodes: number;
  readonly #maxCalls: number;
  readonly #episodes = new Map<string, OpenEpisode>();
  readonly #calls = new Map<string, OpenCall>();
  /** Episodes whose root was sent (bounded like the open ones). */
  readonly #closed = new Set<string>();
  readonly #closedRoots = new Map<string, OtlpSpan>();

  /**
   * Create a builder.
   *
   * @param captureId The capture the events belong to.
   * @param options Size limit and bounds.
   */
  constructor(captureId: string, options: OtlpSpanBuilderOptions = {}) {
    this.#captureId = captureId;
    this.#max = options.maxValueChars ?? 8192;
    this.#maxEpisodes = options.maxOpenEpisodes ?? Infinity;
    this.#maxCalls = options.maxOpenCalls ?? Infinity;
  }

  /**
   * The lowest sequence an open episode or call started at: replaying the
   * capture from there rebuilds what this builder holds.
   *
   * @returns The sequence, or null when nothing is open.
   */
  oldestOpenSequence(): number | null {
    let min: number | null = null;
    for (const e of this.#episodes.values()) {
      if (min === null || e.first < min) min = e.first;
    }
    for (const c of this.#calls.values()) {
      if (min === null || c.seq < min) min = c.seq;
    }
    return min;
  }

  #episode(ev: TraceEvent, out: OtlpSpan[]): OpenEpisode {
    const open = this.#episodes.get(ev.episode_id);
    if (open) {
      open.last = ev.timestamp;
      return open;
    }
    const ids = {
      traceId: derivedId(`${this.#captureId}/${ev.episode_id}`, 16),
      rootId: derivedId(`${this.#captureId}/${ev.episode_id}/root`, 8),
    };
    const fresh: OpenEpisode = {
      ...ids,
      root: rootSpan(ev, { captureId: this.#captureId, ...ids }),
      last: ev.timestamp,
      first: ev.sequence,
      input: [],
      output: [],
      droppedMessages: 0,
      provider: null,
    };
    // The root went out already: later spans still hang under it.
    if (this.#closed.has(ev.episode_id)) return fresh;
    this.#episodes.set(ev.episode_id, fresh);
    if (this.#episodes.size > this.#maxEpisodes) {
      const oldest = this.#episodes.keys().next().value!;
      out.push(...this.finishEpisode(oldest));
    }
    return fresh;
  }

  /**
   * Take one event.
   *
   * @param ev The next event of the capture, in sequence order.
   * @returns The spans this event finished (often none).
   */
  add(ev: TraceEvent): OtlpSpan[] {
    if (ev.episode_id === "_capture") return [];
    const p = ev.payload as Record<string, unknown>;
    const isOutcome = ev.kind === "annotation" && p.type === "episode.outcome";
    if (isOutcome && this.#closedRoots.has(ev.episode_id)) {
      // Marked after the episode finished: send its root again with it.
      const root = structuredClone(this.#closedRoots.get(ev.episode_id)!);
      setOutcome(root, ev);
      this.#closedRoots.set(ev.episode_id, root);
      return [root];
    }
    const out: OtlpSpan[] = [];
    const episode = this.#episode(ev, out);
    if (ev.kind === "message") {
      this.#message(episode, ev);
    } else if (isOutcome) {
      setOutcome(episode.root, ev);
      out.push(...this.finishEpisode(ev.episode_id));
    } else if (ev.kind === "episode.finished") {
      out.push(...this.finishEpisode(ev.episode_id));
    } else if (ev.kind === "tool.call.started") {
      this.#callStarted(episode, ev, out);
    } else if (
      (ev.kind === "tool.call.completed" || ev.kind === "tool.call.failed") &&
      ev.parent_event_id && this.#calls.has(ev.parent_event_id)
    ) {
      const span = this.#calls.get(ev.parent_event_id)!.span;
      this.#calls.delete(ev.parent_event_id);
      endToolSpan(span, { ev, max: this.#max });
      out.push(span);
    } else if (ev.kind === "model.responded") {
      episode.provider ??= providerOf(ev);
      out.push(chatSpan(ev, {
        traceId: episode.traceId,
        parentSpanId: episode.rootId,
        max: this.#max,
      }));
    }
    return out;
  }

  /** Keep a user or assistant message for the root's message attributes. */
  #message(episode: OpenEpisode, ev: TraceEvent): void {
    const p = ev.payload as Record<string, unknown>;
    const role = p.role === "user" ? "user" : "assistant";
    const list = role === "user" ? episode.input : episode.output;
    if (episode.input.length + episode.output.length >= MAX_ROOT_MESSAGES) {
      episode.droppedMessages++;
      return;
    }
    list.push({
      msg: {
        role,
        parts: [{
          type: "text",
          content: clip(String(p.text ?? ""), this.#max),
        }],
      },
      seq: ev.sequence,
    });
  }

  /**
   * Open a tool span: under its parent call if that is open and in the
   * same trace (a host_c child session's calls point to the parent
   * session's `task` call, another episode: they stay under their root).
   */
  #callStarted(episode: OpenEpisode, ev: TraceEvent, out: OtlpSpan[]): void {
    const parent = ev.parent_event_id
      ? this.#calls.get(ev.parent_event_id)
      : undefined;
    const parentId = parent && parent.span.traceId === episode.traceId
      ? parent.span.spanId
      : episode.rootId;
    this.#calls.set(ev.event_id, {
      seq: ev.sequence,
      span: toolSpan(ev, {
        traceId: episode.traceId,
        parentSpanId: parentId,
        max: this.#max,
      }),
    });
    if (this.#calls.size > this.#maxCalls) {
      const oldest = this.#calls.keys().next().value!;
      out.push(incomplete(this.#calls.get(oldest)!.span));
      this.#calls.delete(oldest);
    }
  }

  /**
   * Finish one episode now: its root span, and its open calls as incomplete.
   *
   * @param episodeId The episode.
   * @returns The spans finished.
   */
  finishEpisode(episodeId: string): OtlpSpan[] {
    const open = this.#episodes.get(episodeId);
    if (!open) return [];
    const root = open.root;
    root.endTimeUnixNano = nanos(open.last);
    if (open.provider) {
      root.attributes.push(str("gen_ai.provider.name", open.provider));
    }
    for (
      const [key, list] of [["input", open.input], [
        "output",
        open.output,
      ]] as const
    ) {
      if (list.length === 0) continue;
      root.attributes.push(
        str(`gen_ai.${key}.messages`, JSON.stringify(list.map((m) => m.msg))),
        str(`harness.${key}.sequences`, JSON.stringify(list.map((m) => m.seq))),
      );
    }
    if (open.droppedMessages) {
      root.attributes.push(
        int("harness.messages.dropped", open.droppedMessages),
      );
    }
    const out: OtlpSpan[] = [root];
    for (const [id, call] of this.#calls) {
      if (call.span.traceId !== open.traceId) continue;
      out.push(incomplete(call.span));
      this.#calls.delete(id);
    }
    this.#episodes.delete(episodeId);
    this.#closed.add(episodeId);
    if (this.#closed.size > CLOSED_EPISODES_KEPT) {
      this.#closed.delete(this.#closed.values().next().value!);
    }
    this.#closedRoots.set(episodeId, root);
    if (this.#closedRoots.size > CLOSED_ROOTS_KEPT) {
      this.#closedRoots.delete(this.#closedRoots.keys().next().value!);
    }
    return out;
  }

  /**
   * Finish everything still open (roots and incomplete calls).
   *
   * @returns The spans finished.
   */
  finish(): OtlpSpan[] {
    const out: OtlpSpan[] = [];
    for (const id of [...this.#episodes.keys()]) {
      out.push(...this.finishEpisode(id));
    }
    for (const call of this.#calls.values()) out.push(incomplete(call.span));
    this.#calls.clear();
    return out;
  }
}
