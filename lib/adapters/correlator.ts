/**
 * {@linkcode ToolCallCorrelator}: links a tool call's completion to its
 * start. With a host call id the link is exact; without one it links only
 * when exactly one pending call has the same session, tool name and input,
 * and otherwise marks the completion with a lower correlation fidelity and
 * invents no link. State is in memory, scoped to one ingest process.
 *
 * @module
 */
import { canonicalJson } from "../trace/canonical_json.ts";

/** Pending calls a correlator keeps at most (the oldest are dropped past it). */
export const DEFAULT_MAX_PENDING = 10_000;

/** How a completion was linked to its start. */
export type Correlation =
  | "host_call_id"
  | "unique_match"
  | "ambiguous"
  | "unmatched";

/** A started call not yet completed. */
export interface PendingCall {
  /** Event id of the `tool.call.started`. */
  event_id: string;
  /** Host tool name. */
  tool: string;
  /** Host call id, if any. */
  host_call_id: string | null;
  /** Arguments as started. */
  arguments: Record<string, unknown>;
}

/** Identifies a call for correlation. */
export interface CallKey {
  /** Host name (`host_a`, …). */
  host: string;
  /** Session (episode) id. */
  session: string;
  /** Host tool name. */
  tool: string;
  /** Tool input. */
  input: Record<string, unknown>;
  /** Host call id, when the host gives one. */
  callId?: string | null;
}

/** Result of {@linkcode ToolCallCorrelator.finish}. */
export interface CorrelationResult {
  /** The start's event id, or null when no unambiguous link exists. */
  parentEventId: string | null;
  /** How the link was made. */
  correlation: Correlation;
  /** The pending call that was closed, if any. */
  call: PendingCall | null;
}

/** Correlates tool-call starts and completions. */
export class ToolCallCorrelator {
  /** session key → (call id or "" for id-less) → pending calls. */
  readonly #byId = new Map<string, PendingCall>();
  readonly #byShape = new Map<string, PendingCall[]>();
  readonly #bySession = new Map<string, Set<PendingCall>>();
  /** Shapes whose pending calls can no longer be told apart. */
  readonly #tainted = new Set<string>();
  /** Every pending call, oldest first (for the bound). */
  readonly #order = new Map<
    string,
    PendingCall & { sk: string; shape: string | null }
  >();
  readonly #maxPending: number;
  /** Pending calls dropped to keep within the bound. */
  dropped = 0;

  /**
   * Create a `ToolCallCorrelator`.
   *
   * @param options Most pending calls kept (the oldest are dropped past it, and counted).
   */
  constructor(options: { maxPending?: number } = {}) {
    this.#maxPending = options.maxPending ?? DEFAULT_MAX_PENDING;
  }

  /** Calls pending now. */
  get size(): number {
    return this.#order.size;
  }

  #forget(call: PendingCall): void {
    const c = this.#order.get(call.event_id);
    if (c) {
      this.#order.delete(c.event_id);
      if (c.host_call_id) this.#byId.delete(`${c.sk}\0${c.host_call_id}`);
      if (c.shape) {
        const list = this.#byShape.get(c.shape);
        const at = list?.findIndex((x) => x.event_id === c.event_id) ?? -1;
        if (list && at >= 0) list.splice(at, 1);
        if (list && list.length === 0) {
          this.#byShape.delete(c.shape);
          this.#tainted.delete(c.shape);
        }
      }
      this.#bySession.get(c.sk)?.delete(call);
    }
  }

  static #sessionKey(host: string, session: string): string {
    return `${host}\0${session}`;
  }

  static #shapeKey(k: CallKey): string {
    return `${k.host}\0${k.session}\0${k.tool}\0${canonicalJson(k.input)}`;
  }

  /**
   * Record a started call.
   *
   * @param key The call.
   * @param eventId Event id of its `tool.call.started`.
   */
  start(key: CallKey, eventId: string): void {
    const call: PendingCall = {
      event_id: eventId,
      tool: key.tool,
      host_call_id: key.callId ?? null,
      arguments: key.input,
    };
    const sk = ToolCallCorrelator.#sessionKey(key.host, key.session);
    let shape: string | null = null;
    if (key.callId) this.#byId.set(`${sk}\0${key.callId}`, call);
    else {
      shape = ToolCallCorrelator.#shapeKey(key);
      const list = this.#byShape.get(shape) ?? [];
      if (list.length === 0) this.#tainted.delete(shape); // a fresh group
      list.push(call);
      this.#byShape.set(shape, list);
    }
    let set = this.#bySession.get(sk);
    if (!set) this.#bySession.set(sk, set = new Set());
    set.add(call);
    this.#order.set(eventId, Object.assign(call, { sk, shape }));
    // Sessions that never end must not grow memory without bound.
    while (this.#order.size > this.#maxPending) {
      const oldest = this.#order.values().next().value!;
      this.#forget(oldest);
      this.dropped++;
    }
  }

  /**
   * Close a call and find its start.
   *
   * @param key The call as the completion describes it.
   * @returns The link, or why there is none.
   */
  finish(key: CallKey): CorrelationResult {
    const sk = ToolCallCorrelator.#sessionKey(key.host, key.session);
    if (key.callId) {
      const id = `${sk}\0${key.callId}`;
      const call = this.#byId.get(id);
      if (!call) {
        return { parentEventId: null, correlation: "unmatched", call: null };
      }
      this.#forget(call);
      return {
        parentEventId: call.event_id,
        correlation: "host_call_id",
        call,
      };
    }
    const shape = ToolCallCorrelator.#shapeKey(key);
    const list = this.#byShape.get(shape) ?? [];
    if (list.length === 1 && !this.#tainted.has(shape)) {
      const call = list[0];
      this.#forget(call);
      return {
        parentEventId: call.event_id,
        correlation: "unique_match",
        call,
      };
    }
    if (list.length >= 1) {
      // Parallel identical calls: which one finished cannot be told, now or
      // for the calls left of the group (one left is not "exactly one
      // unambiguous pending call" — it is the rest of an ambiguous group).
      // Close the oldest so counts stay right, but link none.
      this.#tainted.add(shape);
      this.#forget(list[0]);
      return { parentEventId: null, correlation: "ambiguous", call: null };
    }
    return { parentEventId: null, correlation: "unmatched", call: null };
  }

  /**
   * Whether a call with this host call id is pending.
   *
   * @param host Host name.
   * @param session Session id.
   * @param callId Host call id.
   * @returns True when started and not finished.
   */
  isPending(host: string, session: string, callId: string): boolean {
    return this.#byId.has(
      `${ToolCallCorrelator.#sessionKey(host, session)}\0${callId}`,
    );
  }

  /**
   * Pending calls of a session, oldest first.
   *
   * @param host Host name.
   * @param session Session id.
   * @returns The calls.
   */
  pending(host: string, session: string): PendingCall[] {
    return [
      ...(this.#bySession.get(ToolCallCorrelator.#sessionKey(host, session)) ??
        []),
    ];
  }

  /**
   * Forget a session's pending calls (at session end), returning them.
   *
   * @param host Host name.
   * @param session Session id.
   * @returns The calls that never completed.
   */
  endSession(host: string, session: string): PendingCall[] {
    const sk = ToolCallCorrelator.#sessionKey(host, session);
    const calls = this.pending(host, session);
    for (const c of calls) this.#forget(c);
    this.#bySession.delete(sk);
    return calls;
  }
}
