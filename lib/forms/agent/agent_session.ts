/**
 * {@linkcode AgentSession}: runs an agent-form package (an `agent` root
 * with `lookup` nodes and a `choice` leaf) beside a model in a live
 * conversation. The session makes the read-only lookups as soon as their
 * arguments bind (results cached until the next write), serves the
 * model's reads from them, shows the model the candidate values of every
 * state-changing call, and checks the call the model chose against those
 * candidates before it acts — anything else is refused with a reason and
 * nothing is called. With a sink, every call is traced as canonical
 * `tool.call.*` events (and user messages as `message`).
 *
 * @module
 */
import type { EventSink } from "../../tool_gateway/event_sink.ts";
import type { BehaviorPackage } from "../../package/package.ts";
import { AgentEngine, type LookupCall } from "./agent_engine.ts";
import { changesState } from "../../package/tool_effects.ts";
import { message } from "../../trace/episode_events.ts";
import type { EventContext } from "../../trace/make_event.ts";
import { isTool } from "../../runtime/bind_args.ts";
import { tracedCall } from "../../runtime/traced_call.ts";
import {
  MissingCapabilityError,
  type ToolRegistry,
} from "../../runtime/runtime_types.ts";

/** What a call gave back. */
export interface SessionCallResult {
  /** Whether the tool succeeded. */
  ok: boolean;
  /** Its result, or the error message. */
  result: unknown;
  /** `lookup`: served from a lookup the session had made; `call`: called now. */
  from: "lookup" | "call";
  /** Lookups the call let the session make (after a call; empty when served). */
  lookups?: LookupResult[];
}

/** A lookup the session made, with its result. */
export interface LookupResult extends LookupCall {
  /** Whether the tool succeeded. */
  ok: boolean;
  /** Its result, or the error message. */
  result: unknown;
}

/** A state-changing call the session refused. */
export class ChoiceRefusedError extends Error {
  /** The tool the model chose. */
  readonly tool: string;
  /** Why it was refused. */
  readonly reason: string;
  /**
   * Create a `ChoiceRefusedError`.
   *
   * @param tool Tool.
   * @param reason Why.
   */
  constructor(tool: string, reason: string) {
    super(
      `Refused ${tool}: ${reason}; ask the model again with the candidates from candidates()`,
    );
    this.name = "ChoiceRefusedError";
    this.tool = tool;
    this.reason = reason;
  }
}

/** Options of an {@linkcode AgentSession}. */
export interface AgentSessionOptions {
  /** Trace sink. */
  sink?: EventSink | null;
  /** Capture of the trace. @default "runtime" */
  captureId?: string;
  /** Episode of the trace. @default "run" */
  episodeId?: string;
  /** Fan-out cap (the package's own when absent). */
  fanout?: number;
}

/** A conversation run by an agent-form package. */
export class AgentSession {
  readonly #engine: AgentEngine;
  readonly #tools: ToolRegistry;
  readonly #pkg: BehaviorPackage;
  readonly #ctx: EventContext | null;
  readonly #sink: EventSink | null;
  /** Lookups made so far. */
  lookups = 0;

  /**
   * Bind the tools; refuses when one the package needs is missing.
   *
   * @param pkg A validated agent-form package.
   * @param capabilities The tools.
   * @param options Tracing, fan-out cap.
   * @throws {MissingCapabilityError} For a missing tool.
   * @throws {TypeError} When the package is not in the agent form.
   */
  constructor(
    pkg: BehaviorPackage,
    capabilities: { tools: ToolRegistry },
    options: AgentSessionOptions = {},
  ) {
    this.#engine = new AgentEngine(pkg.ir, { fanout: options.fanout });
    this.#pkg = pkg;
    this.#tools = capabilities.tools;
    const missing = pkg.manifest.required_capabilities.filter((t) =>
      !isTool(this.#tools[t])
    );
    if (missing.length) throw new MissingCapabilityError(missing);
    this.#sink = options.sink ?? null;
    this.#ctx = this.#sink
      ? {
        captureId: options.captureId ?? "runtime",
        episodeId: options.episodeId ?? "run",
        source: { host: "harness", adapter: "agent-session", model: null },
      }
      : null;
  }

  async #call(
    tool: string,
    args: Record<string, unknown>,
  ): Promise<{ ok: boolean; result: unknown }> {
    return await tracedCall(
      { name: tool, tool: this.#tools[tool], args },
      this.#ctx ? { sink: this.#sink!, ctx: this.#ctx } : null,
    );
  }

  async #runLookups(): Promise<LookupResult[]> {
    const made: LookupResult[] = [];
    for (
      let due = this.#engine.dueLookups();
      due.length;
      due = this.#engine.dueLookups()
    ) {
      for (const c of due) {
        const r = await this.#call(c.tool, c.args);
        this.#engine.record({ tool: c.tool, args: c.args, ...r }, "lookup");
        this.lookups++;
        made.push({ ...c, ...r });
      }
    }
    return made;
  }

  /**
   * A user message arrived: bind it and make every lookup that now binds.
   *
   * @param text The message.
   * @returns The lookups made, with their results.
   */
  async user(text: string): Promise<LookupResult[]> {
    if (this.#ctx) this.#sink!.emit(message(this.#ctx, { role: "user", text }));
    this.#engine.user(text);
    return await this.#runLookups();
  }

  #writes(tool: string): boolean {
    return changesState(this.#pkg.manifest.effects ?? {}, tool);
  }

  /**
   * The model asks for a read: served from a lookup made since the last
   * write when there is one, else called now (and lookups follow).
   *
   * @param tool A read-only tool.
   * @param args Arguments.
   * @returns The result and where it came from.
   * @throws {ChoiceRefusedError} For a state-changing tool (use act()).
   */
  async read(
    tool: string,
    args: Record<string, unknown>,
  ): Promise<SessionCallResult> {
    if (this.#writes(tool)) {
      throw new ChoiceRefusedError(tool, "it changes state; use act()");
    }
    const hit = this.#engine.cached(tool, args);
    if (hit) return { ok: hit.ok, result: hit.result, from: "lookup" };
    if (!isTool(this.#tools[tool])) {
      throw new MissingCapabilityError([tool]);
    }
    const r = await this.#call(tool, args);
    this.#engine.record({ tool, args, ...r }, "model");
    const lookups = await this.#runLookups();
    return { ...r, from: "call", lookups };
  }

  /**
   * What the choice leaf shows the model: every state-changing tool it may
   * pick and the candidates of each argument now.
   *
   * @returns Tool → argument → candidate values (or a note for text).
   */
  candidates(): Record<string, Record<string, unknown[] | string>> {
    return this.#engine.choiceCandidates();
  }

  /**
   * The model chose a state-changing call: checked against the candidates,
   * then made; the lookup cache is dropped and lookups follow.
   *
   * @param choice The tool and arguments.
   * @returns The result.
   * @throws {ChoiceRefusedError} When the tool or a value is not allowed; nothing is called.
   */
  async act(
    choice: { tool: string; arguments: Record<string, unknown> },
  ): Promise<SessionCallResult> {
    const chk = this.#engine.check(choice.tool, choice.arguments);
    if (!chk.ok) throw new ChoiceRefusedError(choice.tool, chk.reason);
    const r = await this.#call(choice.tool, choice.arguments);
    this.#engine.record(
      { tool: choice.tool, args: choice.arguments, ...r },
      "choice",
      {
        changesState: true,
      },
    );
    const lookups = await this.#runLookups();
    return { ...r, from: "call", lookups };
  }

  /** Every call so far, with who made it. */
  get calls(): readonly {
    tool: string;
    args: Record<string, unknown>;
    by: string;
  }[] {
    return this.#engine.calls;
  }
}
