/**
 * {@linkcode Conversation}: the driver that owns the loop of a live
 * conversation with a real model, with or without a compiled agent-form
 * package. Per user message: the package's lookups whose arguments now
 * bind are made (results cached until the next write) → one model request
 * (the conversation so far, the tool schemas, the lookup results) → reads
 * are served from the lookups or called → a state-changing call is checked
 * against the choice leaf's candidates (a refusal goes back to the model as
 * the tool's answer, a bounded number of times) → more requests until the
 * model answers in words, which is the reply to the user.
 *
 * What the model is shown: successful lookups appear as its own earlier
 * tool calls (so a model, or a scripted replay, does not ask again); failed
 * lookups stay hidden (served from the cache if the model asks); state-
 * changing tools are offered with every restricted argument narrowed to
 * its candidates (`enum`), and not at all while an argument has none.
 *
 * Without a package (`null`) it is the plain agent: every tool offered,
 * every call made as asked. Both arms share this loop, so a comparison
 * measures the package and nothing else.
 *
 * @module
 */
import type { EventSink } from "../gateway/event_sink.ts";
import type { BehaviorPackage } from "../compiler/package.ts";
import { changesState } from "../compiler/core_steps.ts";
import {
  annotation,
  episodeFinished,
  episodeStarted,
  type EventContext,
  message,
  modelRequested,
  modelResponded,
} from "../trace/events.ts";
import type {
  ChatMessage,
  ChatModel,
  ChatResponse,
  ChatTool,
  ChatToolCall,
} from "../models/chat_types.ts";
import {
  AgentSession,
  ChoiceRefusedError,
  type LookupResult,
} from "./agent_session.ts";
import { isTool } from "./bind_args.ts";
import { tracedCall } from "./traced_call.ts";
import { constrainedToolSchema, derivedToolSchema } from "./tool_schemas.ts";
import { MissingCapabilityError, type ToolRegistry } from "./runtime_types.ts";

/** What a conversation is bound to. */
export interface ConversationCapabilities {
  /** The tools, by name. */
  tools: ToolRegistry;
  /** Their schemas as the model should see them (derived from the package when absent). */
  schemas?: ChatTool[];
  /** Instructions for the model (a domain policy, a role). */
  instructions?: string;
}

/** Options of a {@linkcode Conversation}. */
export interface ConversationOptions {
  /** The model. */
  model: ChatModel;
  /** Trace sink: with one, every message, call and model request is an event. */
  sink?: EventSink | null;
  /** Capture of the trace. @default "runtime" */
  captureId?: string;
  /** Episode of the trace. @default "conversation" */
  episodeId?: string;
  /** Most model requests for one user message. @default 16 */
  maxRequestsPerTurn?: number;
  /** Most refused choices for one user message; one more stops the conversation. @default 2 */
  maxRefusalsPerTurn?: number;
  /** Lookup fan-out cap (the package's own when absent). */
  fanout?: number;
}

/** How one user message ended. */
export interface TurnResult {
  /** `replied`: the model answered in words; `stopped`: the package stopped the conversation. */
  status: "replied" | "stopped";
  /** The reply to the user. */
  reply: string | null;
  /** Why it stopped. */
  reason: string | null;
  /** Model requests this turn. */
  requests: number;
}

/** What a conversation did so far. */
export interface ConversationStats {
  /** Model requests. */
  model_requests: number;
  /** Prompt tokens the API reported. */
  prompt_tokens: number;
  /** Completion tokens the API reported. */
  completion_tokens: number;
  /** Tool calls made (lookups, model reads, writes). */
  tool_calls: number;
  /** Lookups the package made. */
  lookups: number;
  /** Lookups shown to the model. */
  lookups_shown: number;
  /** Model reads served from a lookup. */
  served: number;
  /** State-changing calls made. */
  writes: number;
  /** Choices refused (tool or value not allowed, arguments not JSON, unknown tool). */
  refused: number;
}

/** A call the conversation made or refused. */
export interface ConversationCall {
  /** Tool. */
  tool: string;
  /** Arguments (null when the model's were not JSON). */
  args: Record<string, unknown> | null;
  /** `lookup` (package), `model` (asked for and made), `served` (asked for, from a lookup), `refused`. */
  by: "lookup" | "model" | "served" | "refused";
  /** Whether it changed state (made writes only). */
  write: boolean;
  /** Whether the tool succeeded (refused: false). */
  ok: boolean;
  /** Why it was refused. */
  reason?: string;
}

const PACKAGE_NOTE =
  "Results of read-only lookups that were needed are already in the conversation as your own tool calls; do not repeat them. State-changing tools accept only the values their schemas list.";

function content(ok: boolean, result: unknown): string {
  const text = typeof result === "string" ? result : JSON.stringify(result);
  return ok ? text ?? "null" : `Error: ${text}`;
}

/** A live conversation, with a package or as the plain agent. */
export class Conversation {
  readonly #pkg: BehaviorPackage | null;
  readonly #caps: ConversationCapabilities;
  readonly #model: ChatModel;
  readonly #session: AgentSession | null;
  readonly #schemas = new Map<string, ChatTool>();
  readonly #messages: ChatMessage[] = [];
  readonly #calls: ConversationCall[] = [];
  readonly #ctx: EventContext | null;
  readonly #sink: EventSink | null;
  readonly #maxRequests: number;
  readonly #maxRefusals: number;
  #ids = 0;
  #started = false;
  #finished = false;
  readonly #stats: ConversationStats = {
    model_requests: 0,
    prompt_tokens: 0,
    completion_tokens: 0,
    tool_calls: 0,
    lookups: 0,
    lookups_shown: 0,
    served: 0,
    writes: 0,
    refused: 0,
  };

  /**
   * Bind a package (or none) to tools and a model.
   *
   * @param pkg A validated agent-form package, or null for the plain agent.
   * @param caps Tools, their schemas, instructions.
   * @param options Model, tracing, bounds.
   * @throws {MissingCapabilityError} When a tool the package needs is not bound.
   * @throws {TypeError} When the package is not in the agent form.
   */
  constructor(
    pkg: BehaviorPackage | null,
    caps: ConversationCapabilities,
    options: ConversationOptions,
  ) {
    this.#pkg = pkg;
    this.#caps = caps;
    this.#model = options.model;
    this.#maxRequests = options.maxRequestsPerTurn ?? 16;
    this.#maxRefusals = options.maxRefusalsPerTurn ?? 2;
    this.#sink = options.sink ?? null;
    this.#ctx = this.#sink
      ? {
        captureId: options.captureId ?? "runtime",
        episodeId: options.episodeId ?? "conversation",
        source: {
          host: "harness",
          adapter: "conversation",
          model: options.model.id,
        },
      }
      : null;
    for (const s of caps.schemas ?? []) this.#schemas.set(s.name, s);
    this.#session = pkg
      ? new AgentSession(pkg, { tools: caps.tools }, {
        sink: this.#sink,
        captureId: this.#ctx?.captureId,
        episodeId: this.#ctx?.episodeId,
        fanout: options.fanout,
      })
      : null;
    const missing = Object.keys(caps.tools).filter((t) =>
      !isTool(caps.tools[t])
    );
    if (missing.length) throw new MissingCapabilityError(missing);
  }

  /** The conversation as the model sees it (without the instructions). */
  get messages(): readonly ChatMessage[] {
    return this.#messages;
  }

  /** Every call made or refused, in order. */
  get calls(): readonly ConversationCall[] {
    return this.#calls;
  }

  /** Counts so far. */
  get stats(): ConversationStats {
    return { ...this.#stats };
  }

  #emit(ev: Parameters<EventSink["emit"]>[0]): void {
    this.#sink?.emit(ev);
  }

  #start(): void {
    if (this.#started || !this.#ctx) return;
    this.#started = true;
    this.#emit(episodeStarted(this.#ctx, {
      reason: "conversation",
      ...(this.#pkg
        ? { package: this.#pkg.manifest.name, digest: this.#pkg.digest }
        : {}),
    }, { actor: "runtime" }));
  }

  /**
   * End the traced episode (with an outcome when one is known).
   *
   * @param outcome The judged outcome, or null.
   * @param reason How it ended. @default "completed"
   */
  finish(
    outcome: { success: boolean; [k: string]: unknown } | null = null,
    reason = "completed",
  ): void {
    if (!this.#ctx || this.#finished) return;
    this.#start();
    this.#finished = true;
    if (outcome) {
      const { success, ...rest } = outcome;
      this.#emit(
        annotation(this.#ctx, {
          type: "episode.outcome",
          success,
          outcome: rest,
        }),
      );
    }
    this.#emit(episodeFinished(this.#ctx, { reason }, { actor: "runtime" }));
  }

  #writes(tool: string): boolean {
    if (!this.#pkg) return false;
    return changesState(this.#pkg.manifest.effects ?? {}, tool);
  }

  #schema(tool: string): ChatTool {
    return this.#schemas.get(tool) ??
      (this.#pkg
        ? derivedToolSchema(this.#pkg, tool)
        : { name: tool, parameters: { type: "object", properties: {} } });
  }

  /** The tools offered now (the package's reads, and its choices that have candidates). */
  offeredTools(): ChatTool[] {
    const names = Object.keys(this.#caps.tools).sort();
    if (!this.#session || !this.#pkg) return names.map((t) => this.#schema(t));
    const out: ChatTool[] = [];
    const effects = this.#pkg.manifest.effects ?? {};
    for (const t of names) if (effects[t] === "read") out.push(this.#schema(t));
    const cands = this.#session.candidates();
    const choice = Object.values(this.#pkg.ir.nodes).find((n) =>
      n.kind === "choice"
    );
    for (const spec of choice?.kind === "choice" ? choice.tools : []) {
      if (!(spec.tool in this.#caps.tools)) continue;
      const s = constrainedToolSchema(
        this.#schema(spec.tool),
        spec,
        cands[spec.tool] ?? {},
      );
      if (s) out.push(s);
    }
    return out;
  }

  #showLookups(made: LookupResult[]): void {
    this.#stats.lookups += made.length;
    this.#stats.tool_calls += made.length;
    for (const l of made) {
      this.#calls.push({
        tool: l.tool,
        args: l.args,
        by: "lookup",
        write: false,
        ok: l.ok,
      });
    }
    const shown = made.filter((l) => l.ok);
    if (!shown.length) return;
    this.#stats.lookups_shown += shown.length;
    const calls: ChatToolCall[] = shown.map((l) => ({
      id: `lookup_${++this.#ids}`,
      name: l.tool,
      arguments: l.args,
      raw_arguments: JSON.stringify(l.args),
    }));
    this.#messages.push({
      role: "assistant",
      content: null,
      tool_calls: calls,
    });
    shown.forEach((l, i) =>
      this.#messages.push({
        role: "tool",
        tool_call_id: calls[i].id,
        name: l.tool,
        content: content(l.ok, l.result),
      })
    );
  }

  async #ask(): Promise<ChatResponse> {
    const instructions = [
      this.#caps.instructions,
      this.#pkg ? PACKAGE_NOTE : null,
    ].filter(Boolean).join("\n\n");
    const tools = this.offeredTools();
    const request = {
      messages: [
        ...(instructions
          ? [{ role: "system" as const, content: instructions }]
          : []),
        ...this.#messages,
      ],
      tools,
    };
    const req = this.#ctx
      ? modelRequested(this.#ctx, {
        node_id: this.#pkg ? "agent" : "model",
        request: {
          model: this.#model.id,
          messages: request.messages.length,
          tools: tools.map((t) => t.name),
        },
      })
      : null;
    if (req) this.#emit(req);
    const resp = await this.#model.complete(request);
    this.#stats.model_requests++;
    this.#stats.prompt_tokens += resp.usage?.prompt_tokens ?? 0;
    this.#stats.completion_tokens += resp.usage?.completion_tokens ?? 0;
    if (req) {
      this.#emit(modelResponded(this.#ctx!, {
        node_id: this.#pkg ? "agent" : "model",
        response: {
          model: resp.model,
          finish_reason: resp.finish_reason,
          tool_calls: resp.tool_calls.map((c) => c.name),
          ...(resp.usage
            ? {
              usage: {
                input_tokens: resp.usage.prompt_tokens,
                output_tokens: resp.usage.completion_tokens,
                total_tokens: resp.usage.prompt_tokens +
                  resp.usage.completion_tokens,
              },
            }
            : {}),
        },
      }, { parentEventId: req.event_id }));
    }
    return resp;
  }

  #refuse(
    call: ChatToolCall,
    why: string,
  ): { content: string; refused: string; lookups: LookupResult[] } {
    this.#stats.refused++;
    this.#calls.push({
      tool: call.name,
      args: call.arguments,
      by: "refused",
      write: false,
      ok: false,
      reason: why,
    });
    return { content: `Refused: ${why}`, refused: why, lookups: [] };
  }

  /** Answer one tool call: the content for the model, and the lookups it let the package make. */
  async #answer(
    call: ChatToolCall,
  ): Promise<
    { content: string; refused: string | null; lookups: LookupResult[] }
  > {
    const refuse = (why: string) => this.#refuse(call, why);
    if (call.arguments === null) {
      return refuse(
        `the arguments of ${call.name} are not a JSON object (${
          call.arguments_error ?? "unreadable"
        }); nothing was called`,
      );
    }
    const offered = this.offeredTools().some((t) => t.name === call.name);
    if (
      !(call.name in this.#caps.tools) || (!offered && !this.#writes(call.name))
    ) {
      return refuse(
        `${call.name} is not a tool offered here; nothing was called`,
      );
    }
    const args = call.arguments;
    if (!this.#session) {
      const r = await tracedCall(
        call.name,
        this.#caps.tools[call.name],
        args,
        this.#ctx ? { sink: this.#sink!, ctx: this.#ctx } : null,
      );
      this.#stats.tool_calls++;
      this.#calls.push({
        tool: call.name,
        args,
        by: "model",
        write: false,
        ok: r.ok,
      });
      return { content: content(r.ok, r.result), refused: null, lookups: [] };
    }
    const write = this.#writes(call.name);
    try {
      const r = write
        ? await this.#session.act({ tool: call.name, arguments: args })
        : await this.#session.read(call.name, args);
      const served = r.from === "lookup";
      if (served) this.#stats.served++;
      else this.#stats.tool_calls++;
      if (write) this.#stats.writes++;
      this.#calls.push({
        tool: call.name,
        args,
        by: served ? "served" : "model",
        write,
        ok: r.ok,
      });
      return {
        content: content(r.ok, r.result),
        refused: null,
        lookups: r.lookups ?? [],
      };
    } catch (err) {
      if (err instanceof ChoiceRefusedError) {
        return refuse(
          err.message.replace(/^Refused [^:]+: /, "").replace(
            /; ask the model again.*$/,
            "; choose values from the tool's schema",
          ),
        );
      }
      throw err;
    }
  }

  /**
   * One user message: lookups, then model requests until the model replies
   * in words (or the package stops the conversation).
   *
   * @param text The user's message.
   * @returns How the turn ended.
   * @throws {Error} The model binding's errors (unreachable API, bad key): nothing more is called.
   */
  async user(text: string): Promise<TurnResult> {
    this.#start();
    this.#messages.push({ role: "user", content: text });
    if (this.#session) this.#showLookups(await this.#session.user(text));
    else if (this.#ctx) {
      this.#emit(message(this.#ctx, { role: "user", text }));
    }
    let refusals = 0;
    for (let requests = 1; requests <= this.#maxRequests; requests++) {
      const resp = await this.#ask();
      this.#messages.push({
        role: "assistant",
        content: resp.content,
        ...(resp.tool_calls.length ? { tool_calls: resp.tool_calls } : {}),
      });
      if (resp.content && this.#ctx) {
        this.#emit(
          message(this.#ctx, { role: "assistant", text: resp.content }),
        );
      }
      if (!resp.tool_calls.length) {
        return {
          status: "replied",
          reply: resp.content ?? resp.refusal ?? "",
          reason: null,
          requests,
        };
      }
      const lookups: LookupResult[] = [];
      let blocked: string | null = null;
      for (const call of resp.tool_calls) {
        // After a refused choice, the answer's later state-changing calls
        // are not made either: they may depend on the refused one.
        const a = blocked && this.#writes(call.name)
          ? this.#refuse(
            call,
            `not made: ${blocked} in the same answer was refused first`,
          )
          : await this.#answer(call);
        if (a.refused) {
          refusals++;
          blocked ??= call.name;
        }
        lookups.push(...a.lookups);
        this.#messages.push({
          role: "tool",
          tool_call_id: call.id,
          name: call.name,
          content: a.content,
        });
      }
      this.#showLookups(lookups);
      if (refusals > this.#maxRefusals) {
        return {
          status: "stopped",
          reply: null,
          reason:
            `the model's state-changing choice was refused ${refusals} times this turn`,
          requests,
        };
      }
    }
    return {
      status: "stopped",
      reply: null,
      reason: `no reply after ${this.#maxRequests} model requests`,
      requests: this.#maxRequests,
    };
  }
}
