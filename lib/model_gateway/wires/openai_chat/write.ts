/**
 * The gateway writing OpenAI Chat Completions: the request's tools narrowed, asked again with refusals, and the
 * gateway's own answers, whole or streamed.
 *
 * @module
 */
import {
  callsWithIds,
  json,
  narrowTools,
  type Obj,
  refusalTexts,
  sse,
  uid,
  type WireWriter,
} from "../../wire_writers.ts";
import { isObject } from "../../wire_types.ts";

/** Chat Completions. */
export const chat: WireWriter = {
  withTools(body, n) {
    return narrowTools(body, {
      n,
      nameOf: (t) =>
        isObject(t.function) && typeof t.function.name === "string"
          ? t.function.name
          : null,
      withSchema: (t, schema) => ({
        ...t,
        function: { ...(t.function as Obj), parameters: schema },
      }),
    });
  },
  withRefusals(body, answer, refusals) {
    const texts = refusalTexts(answer.tool_calls, refusals);
    const messages = Array.isArray(body.messages) ? body.messages : [];
    return {
      ...body,
      messages: [
        ...messages,
        {
          role: "assistant",
          content: answer.text || null,
          tool_calls: answer.tool_calls.map((c) => ({
            id: c.id,
            type: "function",
            function: {
              name: c.name,
              arguments: c.arguments_text ?? JSON.stringify(c.arguments),
            },
          })),
        },
        ...answer.tool_calls.map((c) => ({
          role: "tool",
          tool_call_id: c.id,
          content: texts.get(c.id)!.text,
        })),
      ],
    };
  },
  answer(a, { stream, usage }) {
    const id = `chatcmpl-harness-${uid()}`;
    const created = Math.floor(Date.now() / 1000);
    const model = a.model ?? "harness-package";
    const calls = callsWithIds(a, "call_harness_");
    const finish = calls.length ? "tool_calls" : "stop";
    const zero = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
    const toolCalls = calls.map((c, index) => ({
      index,
      id: c.id,
      type: "function",
      function: { name: c.name, arguments: JSON.stringify(c.arguments) },
    }));
    if (!stream) {
      return json({
        id,
        object: "chat.completion",
        created,
        model,
        choices: [{
          index: 0,
          message: {
            role: "assistant",
            content: a.text || null,
            refusal: null,
            ...(calls.length
              ? { tool_calls: toolCalls.map(({ index: _, ...c }) => c) }
              : {}),
          },
          logprobs: null,
          finish_reason: finish,
        }],
        usage: zero,
      });
    }
    const chunk = (delta: Obj, finish_reason: string | null) => ({
      id,
      object: "chat.completion.chunk",
      created,
      model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason }],
    });
    const events: [string | null, unknown][] = [
      [null, chunk({ role: "assistant", content: a.text || null }, null)],
    ];
    if (calls.length) {
      events.push([null, chunk({ tool_calls: toolCalls }, null)]);
    }
    events.push([null, chunk({}, finish)]);
    if (usage) {
      events.push([null, {
        id,
        object: "chat.completion.chunk",
        created,
        model,
        choices: [],
        usage: zero,
      }]);
    }
    events.push([null, "[DONE]"]);
    return sse(events);
  },
};
