/**
 * {@linkcode BehaviorRuntime}: executes a behavior package against bound
 * capabilities — a tool registry and, for residual leaves, a model binding.
 * It never guesses: an unresolved ref, a branch value with no case, a model
 * answer that breaks its signature or an unrecovered tool error ends the
 * run with an explained stop and what was done so far. Without a sink it
 * emits nothing; with one it emits canonical events (episode, node, tool,
 * model, blackboard), chained like any capture.
 *
 * @module
 */
import { callWithArgs, isTool } from "./bind_args.ts";
import { fieldProblem } from "./signature_check.ts";
import type { UnsealedEvent } from "../trace/event.ts";
import {
  annotation,
  blackboardWrite,
  episodeFinished,
  episodeStarted,
  type EventContext,
  message,
  modelRequested,
  modelResponded,
  nodeEnter,
  nodeExit,
  toolCallCompleted,
  toolCallFailed,
  toolCallStarted,
  toolsetExposed,
} from "../trace/events.ts";
import type { BehaviorPackage } from "../compiler/package.ts";
import type { IrNode } from "../compiler/ir.ts";
import {
  chooseCase,
  evalArgs,
  resolveRef,
  tryResolve,
  UnresolvedRefError,
} from "../compiler/evaluate.ts";

import { runReactLeaf, Stop } from "./react_leaf.ts";
import {
  MissingCapabilityError,
  type ModelBinding,
  type RunOptions,
  type RunResult,
  type RunStep,
  type ToolRegistry,
} from "./runtime_types.ts";

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
    const needsModel = Object.values(pkg.ir.nodes).some((n) =>
      n.kind === "predict" || n.kind === "react" || n.kind === "choice"
    );
    if (needsModel && !this.#model) missing.push("model");
    if (missing.length) throw new MissingCapabilityError(missing);
  }

  /**
   * Run the behavior on one instance.
   *
   * @param input The task input (`text`: the request; `task`: anything else).
   * @param options Tracing.
   * @returns What happened.
   */
  async run(
    input: { text?: string; task?: unknown },
    options: RunOptions = {},
  ): Promise<RunResult> {
    const ir = this.package.ir;
    const board: Record<string, unknown> = { input };
    const steps: RunStep[] = [];
    const modelCalls: RunResult["model_calls"] = [];
    const sink = options.sink ?? null;
    let events = 0;
    const ctx: EventContext | null = sink
      ? {
        captureId: options.captureId ?? "runtime",
        episodeId: options.episodeId ??
          `run_${crypto.randomUUID().slice(0, 8)}`,
        source: {
          host: "runtime",
          adapter: "behavior-runtime",
          model: this.#model?.id ?? null,
        },
      }
      : null;
    const emit = (ev: UnsealedEvent): UnsealedEvent => {
      sink!.emit(ev);
      events++;
      return ev;
    };
    const write = (key: string, value: unknown) => {
      board[key] = value;
      if (ctx) emit(blackboardWrite(ctx, { key, value }));
    };

    const callTool = (tool: string, args: Record<string, unknown>): unknown =>
      callWithArgs(tool, this.#tools[tool], args);

    const exec = async (id: string): Promise<void> => {
      const n: IrNode = ir.nodes[id];
      const enter = ctx
        ? emit(nodeEnter(ctx, { node_id: id, node_kind: n.kind }))
        : null;
      let status = "ok";
      try {
        await run(n);
      } catch (err) {
        status = err instanceof Stop ? err.status : "failed";
        throw err;
      } finally {
        if (ctx) {
          emit(
            nodeExit(ctx, { node_id: id, node_kind: n.kind, status }, {
              parentEventId: enter!.event_id,
            }),
          );
        }
      }
    };

    const resolveInputs = (id: string, inputs: Record<string, string>) => {
      const out: Record<string, unknown> = {};
      for (const [name, path] of Object.entries(inputs)) {
        try {
          out[name] = resolveRef(board, path);
        } catch {
          throw new Stop(
            "stopped",
            `${id}: input ${name} (${path}) does not resolve on this instance; stopping rather than guessing`,
          );
        }
      }
      return out;
    };

    const run = async (n: IrNode): Promise<void> => {
      switch (n.kind) {
        case "sequence":
          for (const c of n.children) await exec(c);
          return;
        case "stop":
          throw new Stop("stopped", n.reason);
        case "agent":
        case "lookup":
        case "choice":
          throw new Stop(
            "stopped",
            `${n.id}: an agent-form package runs a conversation; use AgentSession (lib/runtime/agent_session.ts)`,
          );
        case "branch": {
          const value = tryResolve(board, n.on);
          const then = chooseCase(value, n.cases);
          if (then === null) {
            steps.push({
              node_id: n.id,
              kind: "branch",
              result: value ?? null,
            });
          }
          await exec(then ?? n.otherwise);
          return;
        }
        case "action": {
          let args: Record<string, unknown>;
          try {
            args = evalArgs(n.args, board);
          } catch (err) {
            if (err instanceof UnresolvedRefError) {
              throw new Stop(
                "stopped",
                `${n.id}: ${err.message}; stopping rather than guessing`,
              );
            }
            throw err;
          }
          const max = n.recovery?.max_attempts ?? 1;
          let lastError: unknown = null;
          const tool = { host_name: n.tool, logical_id: n.tool };
          for (let attempt = 1; attempt <= max; attempt++) {
            const started = ctx
              ? emit(
                toolCallStarted(ctx, { tool, arguments: args, attempt }, {
                  actor: "runtime",
                }),
              )
              : null;
            const t0 = performance.now();
            try {
              const result = await callTool(n.tool, args);
              if (ctx) {
                emit(
                  toolCallCompleted(ctx, {
                    tool,
                    arguments: args,
                    result: result ?? null,
                    duration_ms: performance.now() - t0,
                  }, {
                    parentEventId: started!.event_id,
                  }),
                );
              }
              steps.push({
                node_id: n.id,
                kind: "action",
                tool: n.tool,
                arguments: args,
                result,
                attempts: attempt,
              });
              write(n.store, result ?? null);
              return;
            } catch (err) {
              const code = (err as { code?: unknown })?.code;
              lastError = {
                name: (err as Error)?.name,
                message: (err as Error)?.message ?? String(err),
                ...(typeof code === "string" ? { code } : {}),
              };
              if (ctx) {
                emit(
                  toolCallFailed(ctx, {
                    tool,
                    arguments: args,
                    error: lastError,
                  }, { parentEventId: started!.event_id }),
                );
              }
              const retriable = typeof code === "string" &&
                (n.recovery?.retry_on ?? []).includes(code);
              if (!retriable || attempt === max) {
                steps.push({
                  node_id: n.id,
                  kind: "action",
                  tool: n.tool,
                  arguments: args,
                  error: lastError,
                  attempts: attempt,
                });
                throw new Stop(
                  "failed",
                  `${n.id}: ${n.tool} failed (${
                    (lastError as { message: string }).message
                  })${retriable ? ` after ${attempt} attempts` : ""}`,
                );
              }
            }
          }
          return;
        }
        case "predict": {
          const sig = this.package.signatures[n.signature];
          const inputs = resolveInputs(n.id, n.inputs);
          const req = ctx
            ? emit(
              modelRequested(ctx, {
                node_id: n.id,
                request: { signature: n.signature, inputs },
              }),
            )
            : null;
          const outputs = await this.#model!.predict(sig, inputs);
          if (ctx) {
            emit(
              modelResponded(ctx, { node_id: n.id, response: outputs }, {
                parentEventId: req!.event_id,
              }),
            );
          }
          modelCalls.push({
            node_id: n.id,
            signature: n.signature,
            inputs,
            outputs,
          });
          for (const [name, field] of Object.entries(sig.outputs)) {
            const problem = fieldProblem(outputs?.[name], field);
            if (problem) {
              throw new Stop(
                "stopped",
                `${n.id}: the model's ${name} does not fit the signature (${problem}); stopping rather than guessing`,
              );
            }
          }
          for (const [name, variable] of Object.entries(n.outputs)) {
            write(variable, outputs[name]);
          }
          steps.push({ node_id: n.id, kind: "predict", result: outputs });
          return;
        }
        case "react":
          await runReactLeaf(n, {
            signature: this.package.signatures[n.signature],
            model: this.#model!,
            hasTool: (t) => isTool(this.#tools[t]),
            callTool,
            request: input.text ?? null,
            trace: ctx
              ? (tools) => emit(toolsetExposed(ctx, { origin: n.id, tools }))
              : null,
            modelCalls,
            steps,
            write,
          });
          return;
      }
    };

    if (ctx) {
      emit(
        episodeStarted(ctx, {
          reason: "run",
          task: input.task ?? null,
          package: this.package.manifest.name,
          digest: this.package.digest,
        }, { actor: "runtime" }),
      );
      if (input.text !== undefined) {
        emit(message(ctx, { role: "user", text: input.text }));
      }
    }
    let status: RunResult["status"] = "completed";
    let reason: string | null = null;
    try {
      await exec(ir.root);
    } catch (err) {
      if (!(err instanceof Stop)) throw err;
      status = err.status;
      reason = err.message;
    }
    if (ctx) {
      const outcome = options.outcome?.();
      if (outcome) {
        const { success, ...rest } = outcome;
        emit(
          annotation(ctx, { type: "episode.outcome", success, outcome: rest }),
        );
      }
      emit(
        episodeFinished(ctx, {
          reason: status,
          ...(reason ? { stop_reason: reason } : {}),
        }, { actor: "runtime" }),
      );
    }
    const outputs = { ...board };
    delete outputs.input;
    return { status, reason, outputs, steps, model_calls: modelCalls, events };
  }
}
