/**
 * The react leaf: a bounded loop in which the model picks a tool of the
 * leaf's toolset (or finishes), and the runtime calls it.
 *
 * @module
 */
import type { IrNode, Signature } from "../compiler/ir.ts";
import type { ModelBinding, RunResult, RunStep } from "./runtime_types.ts";

/** A run that ends early: a fallback stop, or a tool error with no recovery. */
export class Stop extends Error {
  /**
   * @param status `stopped` or `failed`.
   * @param reason Why.
   */
  constructor(readonly status: "stopped" | "failed", reason: string) {
    super(reason);
  }
}

/** What a react leaf needs from the run. */
export interface ReactEnv {
  /** The leaf's signature. */
  signature: Signature;
  /** The model. */
  model: ModelBinding;
  /** Whether a tool is bound. */
  hasTool(tool: string): boolean;
  /** Call a bound tool. */
  callTool(tool: string, args: Record<string, unknown>): unknown;
  /** The request text. */
  request: string | null;
  /** Trace the toolset exposed to the model (null without a sink). */
  trace: ((tools: { name: string; logical_id: string }[]) => unknown) | null;
  /** Model calls of the run (appended to). */
  modelCalls: RunResult["model_calls"];
  /** Steps of the run (appended to). */
  steps: RunStep[];
  /** Write a store. */
  write(key: string, value: unknown): void;
}

/**
 * Run a react leaf.
 *
 * @param n The leaf.
 * @param env What it needs from the run.
 * @throws {Stop} When the model has no react(), asks for a tool outside the toolset, or does not finish.
 */
export async function runReactLeaf(
  n: Extract<IrNode, { kind: "react" }>,
  env: ReactEnv,
): Promise<void> {
  if (!env.model.react) {
    throw new Stop(
      "stopped",
      `${n.id}: the model binding has no react()`,
    );
  }
  env.trace?.(n.tools.map((t) => ({ name: t, logical_id: t })));
  const history: unknown[] = [];
  for (let i = 0; i < n.max_steps; i++) {
    const d = await env.model.react(env.signature, {
      tools: n.tools,
      history,
      inputs: { request: env.request },
    });
    env.modelCalls.push({
      node_id: n.id,
      signature: n.signature,
      inputs: { history: history.length },
      outputs: d as Record<string, unknown>,
    });
    if ("done" in d) {
      env.write(n.store, d.result ?? null);
      return;
    }
    if (
      !n.tools.includes(d.tool) ||
      !env.hasTool(d.tool)
    ) {
      throw new Stop(
        "stopped",
        `${n.id}: the model asked for ${d.tool}, which is not in this leaf's toolset`,
      );
    }
    try {
      const result = await env.callTool(d.tool, d.arguments);
      history.push({ tool: d.tool, arguments: d.arguments, result });
      env.steps.push({
        node_id: n.id,
        kind: "react",
        tool: d.tool,
        arguments: d.arguments,
        result,
      });
    } catch (err) {
      history.push({
        tool: d.tool,
        arguments: d.arguments,
        error: (err as Error).message,
      });
    }
  }
  throw new Stop(
    "stopped",
    `${n.id}: the react leaf used its ${n.max_steps} steps without finishing`,
  );
}
