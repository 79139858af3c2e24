/**
 * {@linkcode ToolGateway}: wraps callables so that every invocation is
 * recorded as `tool.call.started` then `tool.call.completed` or
 * `tool.call.failed`, with the tool's identity, input schema when known,
 * arguments, result or error and timing. The wrapped function behaves
 * exactly like the original (return value, thrown error, `this`, sync stays
 * sync), and recording fails open: a sink that throws is counted in
 * {@linkcode ToolGateway.droppedEvents} and never reaches the caller. The
 * gateway never awaits a sink, so the only delay it adds is the sink's
 * synchronous `emit` (a store sink: one write; an HTTP sink: a queue push).
 *
 * @module
 */
import { readParameters } from "./parameters.ts";
import type { EventSource, UnsealedEvent } from "../trace/event.ts";
import { annotation } from "../trace/episode_events.ts";
import type { EventContext } from "../trace/make_event.ts";
import {
  toolCallCompleted,
  toolCallFailed,
  toolCallStarted,
  type ToolRef,
} from "../trace/tool_events.ts";
import { validateId } from "../trace/ids.ts";
import type { EventSink } from "./event_sink.ts";

/** The environment a tool acts on, as the gateway can observe it. */
export interface EnvironmentAdapter {
  /** The state now (JSON). Called around state-changing calls. */
  snapshot(): unknown;
  /** The task outcome, when the environment can judge it; null when not (yet). */
  outcome?(): { success: boolean; [key: string]: unknown } | null;
}

/** Options of {@linkcode ToolGateway}. */
export interface ToolGatewayOptions {
  /** Capture to record into. */
  captureId: string;
  /** Episode of the calls. */
  episodeId: string;
  /**
   * Environment adapter for snapshots and outcomes.
   * @default null
   */
  env?: EnvironmentAdapter | null;
  /**
   * Source of the events.
   * @default {host: "gateway", adapter: "tool-gateway", model: null}
   */
  source?: EventSource;
  /** Clock. */
  now?: () => Date;
  /** Event id generator. */
  newId?: () => string;
  /**
   * Milliseconds for call durations (`performance.now` unless a clock is
   * given, then that clock, so a simulated run is reproducible).
   */
  timer?: () => number;
}

/** Options of {@linkcode ToolGateway.wrap}. */
export interface WrapOptions {
  /** Logical id of the tool (shared across hosts). */
  logicalId?: string | null;
  /** Name as callers know it; defaults to the function's name. */
  hostName?: string | null;
  /**
   * Destructive tools always get state snapshots.
   * @default false
   */
  destructive?: boolean;
  /**
   * The tool changes state: snapshot around it.
   * @default the value of `destructive`
   */
  stateChanging?: boolean;
  /** JSON schema of the input, recorded on each start. */
  inputSchema?: unknown;
  /**
   * Names of the positional parameters, for `arguments`; by default read
   * from the function's source (a single plain-object argument is recorded
   * as-is).
   */
  argNames?: string[];
}

/** Any function a gateway can wrap. */
// deno-lint-ignore no-explicit-any
export type AnyFn = (...args: any[]) => any;

/** Records every call of the functions it wraps. */
export class ToolGateway {
  readonly #sink: EventSink;
  readonly #ctx: EventContext;
  readonly #env: EnvironmentAdapter | null;
  readonly #timer: () => number;
  #dropped = 0;
  #failures: string[] = [];

  /**
   * Create a `ToolGateway`.
   *
   * @param sink Where events go (`store.sink(id)` or an {@linkcode HttpTraceSink}).
   * @param options Capture, episode, environment, source.
   * @throws {InvalidIdError} For a bad capture or episode id.
   */
  constructor(sink: EventSink, options: ToolGatewayOptions) {
    const now = options.now;
    this.#timer = options.timer ??
      (now ? () => now().getTime() : () => performance.now());
    this.#sink = sink;
    this.#env = options.env ?? null;
    this.#ctx = {
      captureId: validateId("capture", options.captureId),
      episodeId: validateId("episode", options.episodeId),
      source: options.source ??
        { host: "gateway", adapter: "tool-gateway", model: null },
      ...(options.now ? { now: options.now } : {}),
      ...(options.newId ? { newId: options.newId } : {}),
    };
  }

  /** Events that could not be recorded (the sink threw). */
  get droppedEvents(): number {
    return this.#dropped;
  }

  /** The last few recording failures, newest last (for diagnosis). */
  get recentFailures(): readonly string[] {
    return this.#failures;
  }

  #emit(ev: UnsealedEvent): void {
    try {
      const r = this.#sink.emit(ev);
      if (r instanceof Promise) r.catch((err) => this.#fail(err));
    } catch (err) {
      this.#fail(err);
    }
  }

  #fail(err: unknown): void {
    this.#dropped++;
    this.#failures.push(String((err as Error)?.message ?? err));
    if (this.#failures.length > 10) this.#failures.shift();
  }

  #snapshot(): unknown {
    if (!this.#env) return undefined;
    try {
      const s = this.#env.snapshot();
      return s instanceof Promise ? undefined : s;
    } catch (err) {
      this.#fail(err);
      return undefined;
    }
  }

  /**
   * Wrap a function so each call is recorded.
   *
   * @param fn The tool.
   * @param options Identity, destructiveness, schema.
   * @returns A function with the same behaviour.
   *
   * @example
   * ```ts
   * import { ToolGateway } from "./tool_gateway.ts";
   * const events: unknown[] = [];
   * const gw = new ToolGateway({ emit: (e) => events.push(e) }, { captureId: "c", episodeId: "e" });
   * const add = gw.wrap((a: number, b: number) => a + b, { hostName: "add" });
   * import { strictEqual } from "node:assert/strict";
   * strictEqual(add(2, 3), 5);
   * strictEqual(events.length, 2);
   * ```
   */
  wrap<F extends AnyFn>(fn: F, options: WrapOptions = {}): F {
    const ctx = this.#ctx;
    const emit = (ev: UnsealedEvent) => this.#emit(ev);
    const snapshot = () => this.#snapshot();
    const timer = this.#timer;
    const name = options.hostName ?? (fn.name || "anonymous");
    const tool: ToolRef = {
      host_name: name,
      logical_id: options.logicalId ?? null,
    };
    const names = options.argNames ?? parameterNames(fn);
    const snapshots = options.stateChanging ?? options.destructive ?? false;
    const wrapped = function (this: unknown, ...args: unknown[]) {
      const argsObj = argumentsObject(args, names);
      const before = snapshots ? snapshot() : undefined;
      const started = toolCallStarted(ctx, {
        tool,
        arguments: argsObj,
        ...(options.inputSchema !== undefined
          ? { input_schema: options.inputSchema }
          : {}),
        ...(options.destructive ? { destructive: true } : {}),
        ...(before !== undefined ? { state_before: before } : {}),
      });
      emit(started);
      const t0 = timer();
      const done = (result: unknown) => {
        const after = snapshots ? snapshot() : undefined;
        emit(toolCallCompleted(ctx, {
          tool,
          arguments: argsObj,
          result: jsonSafe(result),
          duration_ms: Math.round((timer() - t0) * 1000) / 1000,
          ...(after !== undefined ? { state_after: after } : {}),
        }, { parentEventId: started.event_id }));
      };
      const failed = (err: unknown) => {
        const after = snapshots ? snapshot() : undefined;
        emit(toolCallFailed(ctx, {
          tool,
          arguments: argsObj,
          error: errorRecord(err),
          duration_ms: Math.round((timer() - t0) * 1000) / 1000,
          ...(after !== undefined ? { state_after: after } : {}),
        }, { parentEventId: started.event_id }));
      };
      let out: unknown;
      try {
        out = fn.apply(this, args);
      } catch (err) {
        failed(err);
        throw err;
      }
      if (out instanceof Promise) {
        return out.then((v) => {
          done(v);
          return v;
        }, (err) => {
          failed(err);
          throw err;
        });
      }
      done(out);
      return out;
    };
    Object.defineProperty(wrapped, "name", { value: fn.name });
    Object.defineProperty(wrapped, "length", { value: fn.length });
    return wrapped as F;
  }

  /**
   * Record the environment's task outcome, when it reports one, as an
   * `annotation` of type `episode.outcome`.
   *
   * @returns The event emitted, or null.
   */
  recordOutcome(): UnsealedEvent | null {
    const outcome = this.#env?.outcome?.() ?? null;
    if (!outcome) return null;
    const { success, ...rest } = outcome;
    const ev = annotation(this.#ctx, {
      type: "episode.outcome",
      success,
      outcome: jsonSafe(rest),
    }, { actor: "harness" });
    this.#emit(ev);
    return ev;
  }
}

/**
 * Names of a function's positional parameters when they can be read for
 * certain (see `readParameters`), else none (calls are then recorded with
 * `arg0`, `arg1`, …, or the one object passed).
 */
export function parameterNames(fn: AnyFn): string[] {
  return readParameters(fn) ?? [];
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v) &&
    Object.getPrototypeOf(v) === Object.prototype;
}

function argumentsObject(
  args: unknown[],
  names: string[],
): Record<string, unknown> {
  if (args.length === 1 && isPlainObject(args[0]) && names.length <= 1) {
    return jsonSafe(args[0]) as Record<string, unknown>;
  }
  const out: Record<string, unknown> = {};
  args.forEach((a, i) => {
    out[names[i] ?? `arg${i}`] = jsonSafe(a);
  });
  return out;
}

/** A JSON-safe copy (undefined → null, errors and bigints described). */
function jsonSafe(v: unknown): unknown {
  if (v === undefined) return null;
  try {
    return JSON.parse(
      JSON.stringify(
        v,
        (_k, x) =>
          typeof x === "bigint"
            ? x.toString()
            : x instanceof Error
            ? errorRecord(x)
            : x,
      ) ?? "null",
    );
  } catch {
    return { unserializable: String(v) };
  }
}

function errorRecord(err: unknown): Record<string, unknown> {
  if (err instanceof Error) {
    return {
      name: err.name,
      message: err.message,
      ...(typeof (err as { code?: unknown }).code === "string"
        ? { code: (err as unknown as { code: string }).code }
        : {}),
    };
  }
  return { message: String(err) };
}
