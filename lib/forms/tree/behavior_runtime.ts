/**
 * {@linkcode BehaviorRuntime}: executes a behavior package against bound
 * capabilities — a tool registry and, for residual leaves, a model binding.
 * It never guesses: an unresolved ref, a branch value with no case, a model
 * answer that breaks its signature or an unrecovered tool error ends the
 * run with an explained stop and what was done so far. The walk is the
 * tree engine's (`forms/tree/tree_engine.ts`), the one the verifier replays
 * episodes on; this answers its requests with the bound tools and model.
 * Without a sink it emits nothing; with one it emits canonical events
 * (episode, node, tool, model, blackboard), chained like any capture.
 *
 * @module
 */
import { traceUsage } from "../../runtime/chat_events.ts";
import { callWithArgs, isTool } from "../../runtime/bind_args.ts";
import { ToolBindingError } from "../../tool_gateway/parameters.ts";
import {
  runFailedEvent,
  type RunFailure,
  runFailure,
} from "../../runtime/run_failure.ts";
import { fieldProblem } from "../../package/signature_check.ts";
import type { UnsealedEvent } from "../../trace/event.ts";
import {
  annotation,
  episodeFinished,
  episodeStarted,
  message,
} from "../../trace/episode_events.ts";
import type { EventContext } from "../../trace/make_event.ts";
import { modelRequested, modelResponded } from "../../trace/model_events.ts";
import {
  blackboardWrite,
  nodeEnter,
  nodeExit,
} from "../../trace/runtime_events.ts";
import {
  toolCallCompleted,
  toolCallFailed,
  toolCallStarted,
  toolsetExposed,
} from "../../trace/tool_events.ts";
import type { EventSink } from "../../tool_gateway/event_sink.ts";
import type { BehaviorPackage } from "../../package/package.ts";
import { walkTree } from "./tree_engine.ts";
import { treeNodes } from "./tree_nodes.ts";
import { driveTreeAsync, toolErrorRecord } from "./tree_drive.ts";
import type { TreeAnswer, TreeObserver, TreeRequest } from "./tree_requests.ts";
import { openReactLeaf, reactDecision, reactToolCall } from "./react_leaf.ts";
import {
  MissingCapabilityError,
  type ToolRegistry,
} from "../../runtime/runtime_types.ts";
import type { ModelBinding, RunOptions, RunResult } from "./tree_run_types.ts";

/** A run's trace: events emitted in order, counted. */
class RunTrace {
  readonly ctx: EventContext;
  readonly #sink: EventSink;
  count = 0;

  constructor(sink: EventSink, ctx: EventContext) {
    this.#sink = sink;
    this.ctx = ctx;
  }

  emit(ev: UnsealedEvent): UnsealedEvent {
    this.#sink.emit(ev);
    this.count++;
    return ev;
  }

  /** Node enter/exit and blackboard writes, as the tree engine reports them. */
  get observer(): TreeObserver {
    const ctx = this.ctx;
    return {
      enter: (n) =>
        this.emit(nodeEnter(ctx, { node_id: n.id, node_kind: n.kind })),
      exit: (n, status, enter) =>
        this.emit(
          nodeExit(ctx, { node_id: n.id, node_kind: n.kind, status }, {
            parentEventId: (enter as UnsealedEvent).event_id,
          }),
        ),
      write: (key, value) => this.emit(blackboardWrite(ctx, { key, value })),
    };
  }
}

/** Runs one package. */
export class BehaviorRuntime {
  /** The package it runs. */
  readonly package: BehaviorPackage;
  readonly #tools: ToolRegistry;
  readonly #model: ModelBinding | null;

  /**
   * Bind capabilities; refuses before anything runs when one is missing.
   *
   * @param pkg A validated package (see `loadPackage`).
   * @param capabilities Tools and model.
   * @throws {MissingCapabilityError} For an unbound tool, or no model with residual leaves.
   */
  constructor(
    pkg: BehaviorPackage,
    capabilities: { tools: ToolRegistry; model?: ModelBinding | null },
  ) {
    this.package = pkg;
    this.#tools = capabilities.tools;
    this.#model = capabilities.model ?? null;
    const missing = pkg.manifest.required_capabilities.filter((t) =>
      !isTool(this.#tools[t])
    );
    const needsModel = Object.values(treeNodes(pkg.ir)).some((n) =>
      n.kind === "predict" || n.kind === "react"
    );
    if (needsModel && !this.#model) missing.push("model");
    if (missing.length) throw new MissingCapabilityError(missing);
  }

  /**
   * Run the behavior on one instance: the tree engine walks the package,
   * and this answers its requests with the bound tools and model.
   *
   * @param input The task input (`text`: the request; `task`: anything else).
   * @param options Tracing.
   * @returns What happened.
   */
  async run(
    input: { text?: string; task?: unknown },
    options: RunOptions = {},
  ): Promise<RunResult> {
    const sink = options.sink ?? null;
    const trace = sink
      ? new RunTrace(sink, {
        captureId: options.captureId ?? "runtime",
        episodeId: options.episodeId ??
          `run_${crypto.randomUUID().slice(0, 8)}`,
        source: {
          host: "runtime",
          adapter: "behavior-runtime",
          model: this.#model?.id ?? null,
        },
      })
      : null;
    if (trace) {
      trace.emit(
        episodeStarted(trace.ctx, {
          reason: "run",
          task: input.task ?? null,
          package: this.package.manifest.name,
          digest: this.package.digest,
        }, { actor: "runtime" }),
      );
      if (input.text !== undefined) {
        trace.emit(message(trace.ctx, { role: "user", text: input.text }));
      }
    }
    const walk = walkTree(this.package.ir, {
      input,
      signatures: this.package.signatures,
      oracle: "live",
      checkField: fieldProblem,
      hasTool: (t) => isTool(this.#tools[t]),
      observer: trace?.observer ?? null,
    });
    // A model that fails or a tool that cannot be bound ends the walk
    // (`failed`), the error kept for the result and the trace.
    let failure: RunFailure | null = null;
    const r = await driveTreeAsync(walk, async (req) => {
      try {
        return await this.#answer(req, trace);
      } catch (err) {
        failure = runFailure(err, req.node.id);
        return {
          halt: {
            status: "failed",
            reason: `${req.node.id}: ${failure.message}`,
          },
        };
      }
    });
    if (trace) {
      if (failure) trace.emit(runFailedEvent(trace.ctx, failure));
      const outcome = options.outcome?.();
      if (outcome) {
        const { success, ...rest } = outcome;
        trace.emit(
          annotation(trace.ctx, {
            type: "episode.outcome",
            success,
            outcome: rest,
          }),
        );
      }
      trace.emit(
        episodeFinished(trace.ctx, {
          reason: r.status,
          ...(r.reason ? { stop_reason: r.reason } : {}),
        }, { actor: "runtime" }),
      );
    }
    const outputs = { ...r.board };
    delete outputs.input;
    return {
      status: r.status,
      reason: r.reason,
      outputs,
      steps: r.steps,
      model_calls: r.model_calls,
      error: failure,
      events: trace?.count ?? 0,
    };
  }

  /** Answer one request of the tree engine with the live tools and model. */
  #answer(
    req: TreeRequest,
    trace: RunTrace | null,
  ): TreeAnswer | Promise<TreeAnswer> {
    switch (req.kind) {
      case "call":
        return this.#call(req, trace);
      case "predict":
        return this.#predict(req, trace);
      case "react_open":
        return openReactLeaf(req.node, {
          model: this.#model!,
          trace: trace
            ? (tools) =>
              trace.emit(
                toolsetExposed(trace.ctx, { origin: req.node.id, tools }),
              )
            : null,
        });
      case "react":
        return reactDecision(this.#model!, {
          signature: req.signature,
          context: {
            tools: req.tools,
            history: req.history,
            inputs: req.inputs,
          },
        });
      case "react_call":
        return reactToolCall({
          name: req.tool,
          tool: this.#tools[req.tool],
          args: req.args,
        });
      case "unresolved":
      case "branch":
      case "foreign":
        return; // the engine stops rather than guess, or goes on
    }
  }

  /** One attempt of an action's tool, traced. */
  async #call(
    req: Extract<TreeRequest, { kind: "call" }>,
    trace: RunTrace | null,
  ): Promise<TreeAnswer> {
    const tool = { host_name: req.tool, logical_id: req.tool };
    const args = req.args;
    const started = trace?.emit(
      toolCallStarted(trace.ctx, {
        tool,
        arguments: args,
        attempt: req.attempt,
      }, { actor: "runtime" }),
    );
    const t0 = performance.now();
    try {
      const result = await callWithArgs({
        name: req.tool,
        tool: this.#tools[req.tool],
        args,
      });
      trace?.emit(
        toolCallCompleted(trace.ctx, {
          tool,
          arguments: args,
          result: result ?? null,
          duration_ms: performance.now() - t0,
        }, { parentEventId: started!.event_id }),
      );
      return { ok: true, result };
    } catch (err) {
      // Arguments that cannot be bound are the capabilities' mistake, not
      // the tool's answer: the run fails on it (no recovery retries it).
      if (err instanceof ToolBindingError) throw err;
      const error = toolErrorRecord(err);
      trace?.emit(
        toolCallFailed(trace.ctx, { tool, arguments: args, error }, {
          parentEventId: started!.event_id,
        }),
      );
      return { ok: false, error };
    }
  }

  /** A predict leaf's model call, traced. */
  async #predict(
    req: Extract<TreeRequest, { kind: "predict" }>,
    trace: RunTrace | null,
  ): Promise<TreeAnswer> {
    const inputs = req.inputs;
    const requested = trace?.emit(
      modelRequested(trace.ctx, {
        node_id: req.node.id,
        request: { signature: req.node.signature, inputs },
      }),
    );
    const outputs = await this.#model!.predict(req.signature!, inputs);
    // A binding over a model API reports the answer's token usage.
    const usage = this.#model!.lastUsage;
    trace?.emit(
      modelResponded(trace.ctx, {
        node_id: req.node.id,
        response: outputs,
        ...(usage ? { usage: traceUsage(usage) } : {}),
      }, { parentEventId: requested!.event_id }),
    );
    return { outputs };
  }
}
