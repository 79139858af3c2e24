/**
 * The tree form's residual leaves over a real chat model: a
 * {@linkcode ModelBinding} whose `predict` asks for structured output built
 * from the leaf's signature, and whose `react` offers the leaf's toolset and
 * a `finish` tool, one request per step.
 *
 * @module
 */
import type { Signature } from "../../package/ir.ts";
import type { ModelBinding, ReactDecision } from "./tree_run_types.ts";
import type {
  ChatMessage,
  ChatModel,
  ChatRequest,
  ChatResponse,
  ChatTool,
  ChatUsage,
  JsonSchema,
} from "../../models/chat_types.ts";
import { ModelResponseError } from "../../models/binding_errors.ts";
import {
  decodeOutputs,
  fieldSchema,
  outputsSchema,
} from "./_signature_schema.ts";

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Options of {@linkcode chatModelBinding}. */
export interface ChatModelBindingOptions {
  /** Most tokens per answer (the binding's default when absent). */
  maxTokens?: number;
  /** Sampling temperature (the API's default when absent). */
  temperature?: number;
  /**
   * Schemas of the tools react leaves may offer, by name. A tool without
   * one is offered with an open object schema.
   */
  tools?: Record<string, ChatTool>;
  /** Called with every answer (and its request), e.g. to record usage. */
  onResponse?: (response: ChatResponse, request: ChatRequest) => void;
}

/** A {@linkcode ModelBinding} over a chat model, with the last answer's usage. */
export interface ChatModelBinding extends ModelBinding {
  /** The chat model's id. */
  readonly id: string;
  /** Token usage of the last answer (null before one, or when the API sent none). */
  readonly lastUsage: ChatUsage | null;
  /** Token usage summed over every answer so far. */
  readonly totalUsage: ChatUsage;
  /** Fill a predict leaf's outputs (one structured-output request). */
  predict(
    signature: Signature,
    inputs: Record<string, unknown>,
  ): Promise<Record<string, unknown>>;
  /** Choose a react leaf's next tool call, or finish (one request). */
  react(
    signature: Signature,
    context: {
      tools: string[];
      history: unknown[];
      inputs: Record<string, unknown>;
    },
  ): Promise<ReactDecision>;
}

function formatName(id: string): string {
  return id.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64) || "output";
}

function inputsText(inputs: Record<string, unknown>): string {
  return `Inputs (JSON):\n${JSON.stringify(inputs, null, 2)}`;
}

function historyMessages(history: unknown[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  history.forEach((h, i) => {
    const step = isObject(h) ? h : {};
    const tool = typeof step.tool === "string" ? step.tool : "unknown";
    const args = isObject(step.arguments) ? step.arguments : {};
    const id = `call_${i + 1}`;
    out.push({
      role: "assistant",
      content: null,
      tool_calls: [{
        id,
        name: tool,
        arguments: args,
        raw_arguments: JSON.stringify(args),
      }],
    });
    out.push({
      role: "tool",
      tool_call_id: id,
      name: tool,
      content: "error" in step
        ? `Error: ${String(step.error)}`
        : JSON.stringify(step.result ?? null),
    });
  });
  return out;
}

/**
 * The strict outputs schema of a predict leaf; an index leaf's output (an
 * integer from 0 beside the `options` list it indexes) gets the list's
 * last index as its `maximum`, known only now, so the model cannot answer
 * past its end.
 */
function boundedOutputs(
  signature: Signature,
  inputs: Record<string, unknown>,
): JsonSchema {
  const schema = outputsSchema(signature.outputs, true);
  const options = inputs.options;
  if (!Array.isArray(options) || options.length === 0) return schema;
  const props = schema.properties as Record<string, JsonSchema>;
  for (const [name, f] of Object.entries(signature.outputs)) {
    if (f.type === "integer" && f.minimum === 0 && props[name]) {
      props[name] = { ...props[name], maximum: options.length - 1 };
    }
  }
  return schema;
}

// The binding is one object whose predict and react share the request path and the usage tally.
/**
 * Bind residual leaves to a chat model.
 *
 * `predict` sends the signature's instructions as the system message and
 * the inputs as JSON, with a strict structured-output schema built from the
 * outputs (types, `enum`, `minimum`, and for an index leaf the `maximum`
 * of the list it indexes; object, array and json outputs travel
 * as JSON text and are parsed back); it returns the parsed object and
 * leaves checking it against the signature to the runtime. `react` sends
 * the same, then the steps so far as the model's own tool calls and their
 * results, offers the leaf's tools plus `finish` (`finish_leaf` when a tool
 * has that name) and requires a call: the first call is the decision (a
 * second one in the same answer is dropped: the next step asks again).
 *
 * @param model The chat model.
 * @param options Token limit, temperature, tool schemas, an answer callback.
 * @returns The binding.
 * @throws {ModelResponseError} (from `predict` / `react`) A refusal, an
 *   answer that is not the structured output, text instead of a tool call,
 *   or tool arguments that are not a JSON object.
 * @throws {ModelApiError} (from `predict` / `react`) The API failed.
 *
 * @example A predict leaf
 * ```ts ignore
 * const binding = chatModelBinding(openModel("openai/gpt-4o-mini", { env }));
 * const out = await binding.predict(signature, { request: "refund W1" });
 * console.log(out, binding.lastUsage);
 * ```
 */
export function chatModelBinding(
  model: ChatModel,
  options: ChatModelBindingOptions = {},
): ChatModelBinding {
  let lastUsage: ChatUsage | null = null;
  const total: ChatUsage = { prompt_tokens: 0, completion_tokens: 0 };
  const ask = async (request: ChatRequest): Promise<ChatResponse> => {
    const full: ChatRequest = {
      ...request,
      ...(options.maxTokens !== undefined
        ? { max_tokens: options.maxTokens }
        : {}),
      ...(options.temperature !== undefined
        ? { temperature: options.temperature }
        : {}),
    };
    const resp = await model.complete(full);
    lastUsage = resp.usage;
    total.prompt_tokens += resp.usage?.prompt_tokens ?? 0;
    total.completion_tokens += resp.usage?.completion_tokens ?? 0;
    options.onResponse?.(resp, full);
    return resp;
  };
  const refused = (resp: ChatResponse, sig: Signature): never => {
    throw new ModelResponseError(
      `${model.id} refused ${sig.id}: ${JSON.stringify(resp.refusal)}`,
      { excerpt: resp.refusal },
    );
  };
  return {
    id: model.id,
    get lastUsage() {
      return lastUsage;
    },
    get totalUsage() {
      return { ...total };
    },
    async predict(signature, inputs) {
      const resp = await ask({
        messages: [
          {
            role: "system",
            content:
              `${signature.instructions}\n\nAnswer with a JSON object of the outputs, as the response format describes.`,
          },
          { role: "user", content: inputsText(inputs) },
        ],
        response_format: {
          name: formatName(signature.id),
          schema: boundedOutputs(signature, inputs),
        },
      });
      if (resp.refusal !== null) return refused(resp, signature);
      if (resp.content === null) {
        throw new ModelResponseError(
          `${model.id} answered ${signature.id} without structured output (finish reason ${
            JSON.stringify(resp.finish_reason)
          })`,
        );
      }
      return decodeOutputs(resp.content, { signature, model: model.id });
    },
    async react(signature, context) {
      const finish = context.tools.includes("finish")
        ? "finish_leaf"
        : "finish";
      const outputs = Object.keys(signature.outputs);
      const tools: ChatTool[] = context.tools.map((name) =>
        options.tools?.[name] ?? {
          name,
          parameters: { type: "object", properties: {} },
        }
      );
      tools.push({
        name: finish,
        description:
          "Call this when the task is done (and no other tool call is needed); put the outcome in `result`.",
        parameters: {
          type: "object",
          properties: {
            result: outputs.length
              ? {
                type: "object",
                properties: Object.fromEntries(
                  outputs.map((n) => [
                    n,
                    fieldSchema(signature.outputs[n], false),
                  ]),
                ),
                required: outputs,
              }
              : { description: "The outcome, if any." },
          },
        },
      });
      const resp = await ask({
        messages: [
          {
            role: "system",
            content:
              `${signature.instructions}\n\nCall one tool at a time; call ${finish} when the task is done.`,
          },
          { role: "user", content: inputsText(context.inputs) },
          ...historyMessages(context.history),
        ],
        tools,
        tool_choice: "required",
      });
      if (resp.refusal !== null) return refused(resp, signature);
      const call = resp.tool_calls[0];
      if (!call) {
        throw new ModelResponseError(
          `${model.id} answered ${signature.id} with text instead of calling a tool or ${finish}`,
          { excerpt: resp.content },
        );
      }
      if (call.arguments === null) {
        throw new ModelResponseError(
          `${model.id} called ${call.name} in ${signature.id} with arguments that cannot be used: ${call.arguments_error}`,
          { excerpt: call.raw_arguments },
        );
      }
      if (call.name === finish) {
        return { done: true, result: call.arguments.result ?? null };
      }
      return { tool: call.name, arguments: call.arguments };
    },
  };
}
