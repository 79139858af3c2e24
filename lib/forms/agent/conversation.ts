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
import type { UnsealedEvent } from "../../trace/event.ts";
import { EpisodeTrace } from "../../runtime/episode_trace.ts";
import type { RunFailure } from "../../runtime/run_failure.ts";
import type { BehaviorPackage } from "../../package/package.ts";
import { changesState } from "../../package/tool_effects.ts";
import { message } from "../../trace/episode_events.ts";
import type { EventContext } from "../../trace/make_event.ts";
import type {
  ChatMessage,
  ChatModel,
  ChatResponse,
  ChatTool,
  ChatToolCall,
} from "../../models/chat_types.ts";
import {
  AgentSession,
  ChoiceRefusedError,
  type LookupResult,
  type SessionCallResult,
} from "./agent_session.ts";
import { isTool } from "../../runtime/bind_args.ts";
import { tracedCall } from "../../runtime/traced_call.ts";
import { derivedToolSchema, packageOffer } from "./tool_schemas.ts";
import { chatRequested, chatResponded } from "../../runtime/chat_events.ts";
import {
  lookupMessages,
  PACKAGE_NOTE,
  toolContent,
} from "./conversation_messages.ts";
import { MissingCapabilityError } from "../../runtime/runtime_types.ts";

import {
  type ConversationCall,
  type ConversationCapabilities,
  type ConversationOptions,
  type ConversationStats,
  emptyStats,
  type TurnResult,
} from "./conversation_types.ts";

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
  readonly #trace: EpisodeTrace;
  readonly #maxRequests: number;
  readonly #maxRefusals: number;
  readonly #maxTokens: number | undefined;
  #ids = 0;
  readonly #stats: ConversationStats = emptyStats();

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
    this.#maxTokens = options.maxTokens;
    const sink = options.sink ?? null;
    const ctx: EventContext = {
      captureId: options.captureId ?? "runtime",
      episodeId: options.episodeId ?? "conversation",
      source: {
        host: "harness",
        adapter: "conversation",
        model: options.model.id,
      },
    };
    this.#ctx = sink ? ctx : null;
    this.#trace = new EpisodeTrace(sink, ctx, {
      reason: "conversation",
      ...(pkg ? { package: pkg.manifest.name, digest: pkg.digest } : {}),
    });
    for (const s of caps.schemas ?? []) this.#schemas.set(s.name, s);
    this.#session = pkg
      ? new AgentSession(pkg, { tools: caps.tools }, {
        sink,
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

  #emit(ev: UnsealedEvent): void {
    this.#trace.emit(ev);
  }

  /**
   * End the traced episode (with an outcome when one is known, and the
   * error when the conversation failed).
   *
   * @param outcome The judged outcome, or null.
   * @param reason How it ended. @default "completed"
   * @param failure The error a failed conversation ended on.
   */
  finish(
    outcome: { success: boolean; [k: string]: unknown } | null = null,
    reason = "completed",
    failure: RunFailure | null = null,
  ): void {
    this.#trace.finish(outcome, reason, failure);
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
    const names = Object.keys(this.#caps.tools);
    if (!this.#session || !this.#pkg) {
      return names.sort().map((t) => this.#schema(t));
    }
    return packageOffer(this.#pkg, {
      bound: names,
      schemaOf: (t) => this.#schema(t),
      candidates: this.#session.candidates(),
    });
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
    const shown = lookupMessages(made, () => `lookup_${++this.#ids}`);
    this.#stats.lookups_shown += shown.shown;
    this.#messages.push(...shown.messages);
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
      ...(this.#maxTokens !== undefined ? { max_tokens: this.#maxTokens } : {}),
    };
    const node = this.#pkg ? "agent" : "model";
    const req = this.#ctx
      ? chatRequested(this.#ctx, {
        nodeId: node,
        modelId: this.#model.id,
        request,
      })
      : null;
    if (req) this.#emit(req);
    const resp = await this.#model.complete(request);
    this.#stats.model_requests++;
    this.#stats.prompt_tokens += resp.usage?.prompt_tokens ?? 0;
    this.#stats.completion_tokens += resp.usage?.completion_tokens ?? 0;
    if (req) {
      this.#emit(
        chatResponded(this.#ctx!, {
          nodeId: node,
          response: resp,
          requested: req,
        }),
      );
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

  /** Why a call cannot be made at all, or null. */
  #unanswerable(call: ChatToolCall): string | null {
    if (call.arguments === null) {
      return `the arguments of ${call.name} are not a JSON object (${
        call.arguments_error ?? "unreadable"
      }); nothing was called`;
    }
    const offered = this.offeredTools().some((t) => t.name === call.name);
    return !(call.name in this.#caps.tools) ||
        (!offered && !this.#writes(call.name))
      ? `${call.name} is not a tool offered here; nothing was called`
      : null;
  }

  /** Answer one tool call: the content for the model, and the lookups it let the package make. */
  async #answer(
    call: ChatToolCall,
  ): Promise<
    { content: string; refused: string | null; lookups: LookupResult[] }
  > {
    const why = this.#unanswerable(call);
    if (why) return this.#refuse(call, why);
    const args = call.arguments!;
    const write = this.#writes(call.name);
    let r: { ok: boolean; result: unknown } & Partial<SessionCallResult>;
    try {
      r = !this.#session
        ? await tracedCall({
          name: call.name,
          tool: this.#caps.tools[call.name],
          args,
        }, this.#trace.target)
        : write
        ? await this.#session.act({ tool: call.name, arguments: args })
        : await this.#session.read(call.name, args);
    } catch (err) {
      if (!(err instanceof ChoiceRefusedError)) throw err;
      return this.#refuse(
        call,
        `${err.reason}; choose values from the tool's schema`,
      );
    }
    const served = r.from === "lookup";
    this.#stats[served ? "served" : "tool_calls"]++;
    if (write) this.#stats.writes++;
    const by = served ? "served" : "model";
    this.#calls.push({ tool: call.name, args, by, write, ok: r.ok });
    return {
      content: toolContent(r.ok, r.result),
      refused: null,
      lookups: r.lookups ?? [],
    };
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
    this.#trace.start();
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
