/**
 * A capture as OpenTelemetry traces (OTLP/HTTP JSON), after the GenAI
 * semantic conventions: an episode is a trace with an `invoke_agent` root
 * span (`gen_ai.conversation.id` = episode id, user and assistant messages
 * as span events, the outcome as attributes); a tool call is a span
 * `execute_tool {name}` (`gen_ai.operation.name`, `gen_ai.tool.name`,
 * `gen_ai.tool.call.id`, arguments and result as attributes within a size
 * limit, error status from `tool.call.failed`); a model response is a span
 * `chat {model}` with token usage. Every span carries the harness event id
 * and hash it came from. Trace and span ids are derived from event ids, so
 * the same capture always exports the same ids.
 *
 * @module
 */
import type { TraceEvent } from "../trace/event.ts";
import { canonicalJson } from "../trace/canonical_json.ts";
import {
  clip,
  derivedId,
  int,
  nanos,
  type OtlpSpan,
  type OtlpTraces,
  str,
} from "./otlp_types.ts";
import {
  chatSpan,
  errorMessage,
  errorType,
  type GenAiMessage,
  providerOf,
  rootSpan,
  spanIdOf,
} from "./_spans.ts";

export {
  derivedId,
  type OtlpAnyValue,
  type OtlpAttribute,
  type OtlpSpan,
  type OtlpSpanEvent,
  type OtlpTraces,
  str,
} from "./otlp_types.ts";

/** Options of {@linkcode captureToOtlp}. */
export interface OtlpExportOptions {
  /** Longest argument or result value kept, in characters. @default 8192 */
  maxValueChars?: number;
  /** `service.name`. @default "harness" */
  serviceName?: string;
}

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
      root: rootSpan(this.#captureId, ev, ids),
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
    if (
      ev.kind === "annotation" && p.type === "episode.outcome" &&
      this.#closedRoots.has(ev.episode_id)
    ) {
      // Marked after the episode finished: send its root again with it.
      const root = structuredClone(this.#closedRoots.get(ev.episode_id)!);
      setOutcome(root, ev);
      this.#closedRoots.set(ev.episode_id, root);
      return [root];
    }
    const out: OtlpSpan[] = [];
    const episode = this.#episode(ev, out);
    const { traceId, rootId, root } = episode;
    const max = this.#max;
    if (ev.kind === "message") {
      const role = p.role === "user" ? "user" : "assistant";
      const list = role === "user" ? episode.input : episode.output;
      if (episode.input.length + episode.output.length >= MAX_ROOT_MESSAGES) {
        episode.droppedMessages++;
      } else {
        list.push({
          msg: {
            role,
            parts: [{ type: "text", content: clip(String(p.text ?? ""), max) }],
          },
          seq: ev.sequence,
        });
      }
    } else if (ev.kind === "annotation" && p.type === "episode.outcome") {
      setOutcome(root, ev);
      out.push(...this.finishEpisode(ev.episode_id));
    } else if (ev.kind === "episode.finished") {
      out.push(...this.finishEpisode(ev.episode_id));
    } else if (ev.kind === "tool.call.started") {
      const tool = p.tool as { host_name: string; logical_id: string | null };
      const parent = ev.parent_event_id
        ? this.#calls.get(ev.parent_event_id)
        : undefined;
      this.#calls.set(ev.event_id, {
        seq: ev.sequence,
        span: {
          traceId,
          spanId: spanIdOf(ev.event_id),
          parentSpanId: parent ? parent.span.spanId : rootId,
          name: `execute_tool ${tool.host_name}`,
          kind: 1,
          startTimeUnixNano: nanos(ev.timestamp),
          endTimeUnixNano: nanos(ev.timestamp),
          attributes: [
            str("gen_ai.operation.name", "execute_tool"),
            str("gen_ai.tool.name", tool.host_name),
            str(
              "gen_ai.tool.call.id",
              typeof p.host_call_id === "string" ? p.host_call_id : ev.event_id,
            ),
            str("gen_ai.tool.call.arguments", clip(p.arguments ?? {}, max)),
            str("harness.event_id", ev.event_id),
            str("harness.event_hash", ev.event_hash),
            int("harness.sequence", ev.sequence),
            ...(tool.logical_id
              ? [str("harness.tool.logical_id", tool.logical_id)]
              : []),
          ],
          status: { code: 0 },
        },
      });
      if (this.#calls.size > this.#maxCalls) {
        const oldest = this.#calls.keys().next().value!;
        out.push(incomplete(this.#calls.get(oldest)!.span));
        this.#calls.delete(oldest);
      }
    } else if (
      (ev.kind === "tool.call.completed" || ev.kind === "tool.call.failed") &&
      ev.parent_event_id && this.#calls.has(ev.parent_event_id)
    ) {
      const span = this.#calls.get(ev.parent_event_id)!.span;
      this.#calls.delete(ev.parent_event_id);
      span.endTimeUnixNano = nanos(ev.timestamp);
      span.attributes.push(
        str("harness.completion.event_id", ev.event_id),
        str("harness.completion.event_hash", ev.event_hash),
        int("harness.completion.sequence", ev.sequence),
      );
      if (ev.kind === "tool.call.failed") {
        span.status = { code: 2, message: errorMessage(p.error) };
        span.attributes.push(
          str("error.type", errorType(p.error)),
          str("harness.error", clip(p.error, max)),
        );
      } else {
        span.attributes.push(
          str("gen_ai.tool.call.result", clip(p.result, max)),
        );
        span.status = { code: 1 };
      }
      out.push(span);
    } else if (ev.kind === "model.responded") {
      episode.provider ??= providerOf(ev);
      out.push(chatSpan(ev, traceId, rootId, max));
    }
    return out;
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

function setOutcome(root: OtlpSpan, ev: TraceEvent): void {
  const p = ev.payload as Record<string, unknown>;
  root.attributes = root.attributes.filter((a) =>
    !a.key.startsWith("harness.outcome")
  );
  root.attributes.push({
    key: "harness.outcome.success",
    value: { boolValue: p.success === true },
  }, int("harness.outcome.sequence", ev.sequence));
  if (p.outcome !== undefined && p.outcome !== null) {
    root.attributes.push(str("harness.outcome", canonicalJson(p.outcome)));
  }
  root.status = p.success === false
    ? { code: 2, message: "failed" }
    : { code: 0 };
}

function incomplete(span: OtlpSpan): OtlpSpan {
  span.attributes.push({
    key: "harness.incomplete",
    value: { boolValue: true },
  });
  return span;
}

/**
 * Wrap spans in an export request.
 *
 * @param captureId The capture (a resource attribute).
 * @param spans The spans.
 * @param serviceName `service.name`.
 * @returns The request.
 */
export function otlpRequest(
  captureId: string,
  spans: OtlpSpan[],
  serviceName = "harness",
): OtlpTraces {
  return {
    resourceSpans: [{
      resource: {
        attributes: [
          str("service.name", serviceName),
          str("harness.capture_id", captureId),
        ],
      },
      scopeSpans: [{ scope: { name: "harness", version: "0.1.0" }, spans }],
    }],
  };
}

/**
 * Map a capture's events to OTLP traces: per episode its root span first,
 * then its spans in the order their calls started.
 *
 * @param captureId The capture.
 * @param events Its events in sequence order (blob references resolved).
 * @param options Size limit, service name.
 * @returns The export request.
 */
export function captureToOtlp(
  captureId: string,
  events: TraceEvent[],
  options: OtlpExportOptions = {},
): OtlpTraces {
  const builder = new OtlpSpanBuilder(captureId, options);
  const spans: OtlpSpan[] = [];
  for (const ev of events) spans.push(...builder.add(ev));
  spans.push(...builder.finish());
  // A root sent again (a late outcome) replaces its first version.
  const last = new Map<string, OtlpSpan>();
  for (const span of spans) last.set(span.spanId, span);
  spans.length = 0;
  spans.push(...new Set(last.values()));
  const sortKey = new Map<OtlpSpan, number>();
  for (const span of spans) {
    const seq = span.attributes.find((a) => a.key === "harness.sequence");
    sortKey.set(
      span,
      seq ? Number((seq.value as { intValue: string }).intValue) : -1,
    );
  }
  // Traces in the order their episodes started (every trace has its root).
  const firstSeq = new Map<string, number>();
  for (const ev of events) {
    if (!firstSeq.has(ev.episode_id)) firstSeq.set(ev.episode_id, ev.sequence);
  }
  const traceOrder = new Map<string, number>();
  for (const span of spans) {
    if (span.parentSpanId) continue;
    const ep = span.attributes.find((a) => a.key === "gen_ai.conversation.id");
    traceOrder.set(
      span.traceId,
      firstSeq.get((ep?.value as { stringValue: string }).stringValue)!,
    );
  }
  spans.sort((a, b) =>
    (traceOrder.get(a.traceId)! - traceOrder.get(b.traceId)!) ||
    (sortKey.get(a)! - sortKey.get(b)!)
  );
  return otlpRequest(captureId, spans, options.serviceName);
}
