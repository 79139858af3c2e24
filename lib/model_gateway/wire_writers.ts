/**
 * What the gateway writes on each wire when it serves a package: the
 * request's tools narrowed, the request asked again with refusals as the
 * refused tools' answers, and answers of its own (tool calls, or words) in
 * the shape the client asked for, whole or streamed.
 *
 * @module
 */
import type { Narrowing, Refusal } from "./serving.ts";
import {
  isObject,
  type NormResponse,
  type NormToolCall,
  type Wire,
} from "./wire_types.ts";

type Obj = Record<string, unknown>;

/** An answer the gateway makes itself. */
export interface OwnAnswer {
  /** Words, or empty. */
  text: string;
  /** Tool calls (ids are made here when absent). */
  calls: { id?: string; name: string; arguments: Record<string, unknown> }[];
  /** The model the request named. */
  model: string | null;
}

/** The bytes of an answer and its content type. */
export interface WrittenAnswer {
  /** Body bytes. */
  body: Uint8Array;
  /** `application/json` or `text/event-stream`. */
  contentType: string;
}

/** A wire's writers. */
export interface WireWriter {
  /**
   * The request body with its tools narrowed.
   *
   * @param body The body as sent.
   * @param n The narrowing.
   * @returns A new body.
   */
  withTools(body: Obj, n: Narrowing): Obj;
  /**
   * The request asked again: the model's refused answer, then each of its
   * calls answered (refused ones with the reason, the others not made).
   *
   * @param body The body last sent.
   * @param answer The model's answer.
   * @param refusals The refused calls.
   * @returns A new body.
   */
  withRefusals(body: Obj, answer: NormResponse, refusals: Refusal[]): Obj;
  /**
   * An answer of the gateway's own.
   *
   * @param a What it says.
   * @param options Streamed or whole; usage in the stream (chat's `include_usage`).
   * @returns Its bytes.
   */
  answer(
    a: OwnAnswer,
    options: { stream: boolean; usage: boolean },
  ): WrittenAnswer;
}

const enc = new TextEncoder();
const json = (v: unknown): WrittenAnswer => ({
  body: enc.encode(JSON.stringify(v)),
  contentType: "application/json",
});
const sse = (events: [string | null, unknown][]): WrittenAnswer => ({
  body: enc.encode(
    events.map(([e, d]) =>
      `${e ? `event: ${e}\n` : ""}data: ${
        typeof d === "string" ? d : JSON.stringify(d)
      }\n\n`
    ).join(""),
  ),
  contentType: "text/event-stream; charset=utf-8",
});

function uid(): string {
  return crypto.randomUUID().replaceAll("-", "").slice(0, 24);
}

/** What each call of a refused answer is told. */
export function refusalTexts(
  calls: NormToolCall[],
  refusals: Refusal[],
): Map<string, { text: string; refused: boolean }> {
  const byId = new Map(refusals.map((r) => [r.id, r]));
  const first = refusals[0];
  const out = new Map<string, { text: string; refused: boolean }>();
  for (const c of calls) {
    const r = byId.get(c.id);
    out.set(
      c.id,
      r
        ? {
          text:
            `Refused: ${r.reason}; choose values from the tool's schema, or tell the user what is missing`,
          refused: true,
        }
        : {
          text:
            `Not made: ${first.tool} in the same answer was refused first; call it again if you still need it`,
          refused: false,
        },
    );
  }
  return out;
}

const callsWithIds = (a: OwnAnswer, prefix: string) =>
  a.calls.map((c) => ({ ...c, id: c.id ?? `${prefix}${uid()}` }));

/**
 * A body's `tools` with a narrowing applied: hidden tools left out, the
 * narrowed ones given their schema, the rest as they were.
 */
function narrowTools(
  body: Obj,
  n: Narrowing,
  nameOf: (t: Obj) => string | null,
  withSchema: (t: Obj, schema: unknown) => Obj,
): Obj {
  const tools = Array.isArray(body.tools) ? body.tools : [];
  return {
    ...body,
    tools: tools.flatMap((t) => {
      const name = isObject(t) ? nameOf(t) : null;
      if (name === null) return [t];
      if (n.hidden.includes(name)) return [];
      return name in n.schemas ? [withSchema(t as Obj, n.schemas[name])] : [t];
    }),
  };
}

const nameField = (t: Obj) => typeof t.name === "string" ? t.name : null;

/** Chat Completions. */
const chat: WireWriter = {
  withTools(body, n) {
    return narrowTools(
      body,
      n,
      (t) =>
        isObject(t.function) && typeof t.function.name === "string"
          ? t.function.name
          : null,
      (t, schema) => ({
        ...t,
        function: { ...(t.function as Obj), parameters: schema },
      }),
    );
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

/** Anthropic Messages. */
const messages: WireWriter = {
  withTools(body, n) {
    return narrowTools(body, n, nameField, (t, schema) => ({
      ...t,
      input_schema: schema,
    }));
  },
  withRefusals(body, answer, refusals) {
    const texts = refusalTexts(answer.tool_calls, refusals);
    const history = Array.isArray(body.messages) ? body.messages : [];
    return {
      ...body,
      messages: [
        ...history,
        {
          role: "assistant",
          content: [
            ...(answer.text ? [{ type: "text", text: answer.text }] : []),
            ...answer.tool_calls.map((c) => ({
              type: "tool_use",
              id: c.id,
              name: c.name,
              input: c.arguments,
            })),
          ],
        },
        {
          role: "user",
          content: answer.tool_calls.map((c) => ({
            type: "tool_result",
            tool_use_id: c.id,
            content: texts.get(c.id)!.text,
            is_error: true,
          })),
        },
      ],
    };
  },
  answer(a, { stream }) {
    const id = `msg_harness_${uid()}`;
    const model = a.model ?? "harness-package";
    const calls = callsWithIds(a, "toolu_harness_");
    const content = [
      ...(a.text ? [{ type: "text", text: a.text }] : []),
      ...calls.map((c) => ({
        type: "tool_use",
        id: c.id,
        name: c.name,
        input: c.arguments,
      })),
    ];
    const stop = calls.length ? "tool_use" : "end_turn";
    const usage = { input_tokens: 0, output_tokens: 0 };
    if (!stream) {
      return json({
        id,
        type: "message",
        role: "assistant",
        model,
        content,
        stop_reason: stop,
        stop_sequence: null,
        usage,
      });
    }
    const events: [string | null, unknown][] = [[
      "message_start",
      {
        type: "message_start",
        message: {
          id,
          type: "message",
          role: "assistant",
          model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage,
        },
      },
    ]];
    content.forEach((b, index) => {
      if (b.type === "text") {
        events.push(["content_block_start", {
          type: "content_block_start",
          index,
          content_block: { type: "text", text: "" },
        }]);
        events.push(["content_block_delta", {
          type: "content_block_delta",
          index,
          delta: { type: "text_delta", text: (b as { text: string }).text },
        }]);
      } else {
        const u = b as { id: string; name: string; input: unknown };
        events.push(["content_block_start", {
          type: "content_block_start",
          index,
          content_block: {
            type: "tool_use",
            id: u.id,
            name: u.name,
            input: {},
          },
        }]);
        events.push(["content_block_delta", {
          type: "content_block_delta",
          index,
          delta: {
            type: "input_json_delta",
            partial_json: JSON.stringify(u.input),
          },
        }]);
      }
      events.push(["content_block_stop", {
        type: "content_block_stop",
        index,
      }]);
    });
    events.push(["message_delta", {
      type: "message_delta",
      delta: { stop_reason: stop, stop_sequence: null },
      usage: { output_tokens: 0 },
    }]);
    events.push(["message_stop", { type: "message_stop" }]);
    return sse(events);
  },
};

/** OpenAI Responses. */
const responses: WireWriter = {
  withTools(body, n) {
    return narrowTools(body, n, nameField, (t, schema) => ({
      ...t,
      parameters: schema,
    }));
  },
  withRefusals(body, answer, refusals) {
    const texts = refusalTexts(answer.tool_calls, refusals);
    const input = Array.isArray(body.input)
      ? body.input
      : typeof body.input === "string"
      ? [{ role: "user", content: body.input }]
      : [];
    return {
      ...body,
      input: [
        ...input,
        ...(answer.text ? [{ role: "assistant", content: answer.text }] : []),
        ...answer.tool_calls.map((c) => ({
          type: "function_call",
          call_id: c.id,
          name: c.name,
          arguments: c.arguments_text ?? JSON.stringify(c.arguments),
        })),
        ...answer.tool_calls.map((c) => ({
          type: "function_call_output",
          call_id: c.id,
          output: texts.get(c.id)!.text,
        })),
      ],
    };
  },
  answer(a, { stream }) {
    const id = `resp_harness_${uid()}`;
    const model = a.model ?? "harness-package";
    const calls = callsWithIds(a, "call_harness_");
    const output: Obj[] = [
      ...(a.text
        ? [{
          type: "message",
          id: `msg_harness_${uid()}`,
          status: "completed",
          role: "assistant",
          content: [{ type: "output_text", text: a.text, annotations: [] }],
        }]
        : []),
      ...calls.map((c) => ({
        type: "function_call",
        id: `fc_harness_${uid()}`,
        call_id: c.id,
        name: c.name,
        arguments: JSON.stringify(c.arguments),
        status: "completed",
      })),
    ];
    const response = {
      id,
      object: "response",
      created_at: Math.floor(Date.now() / 1000),
      status: "completed",
      error: null,
      incomplete_details: null,
      model,
      output,
      parallel_tool_calls: true,
      usage: {
        input_tokens: 0,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 0,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 0,
      },
    };
    if (!stream) return json(response);
    let n = 0;
    const ev = (type: string, d: Obj): [string, unknown] => [
      type,
      { type, sequence_number: n++, ...d },
    ];
    const events: [string | null, unknown][] = [
      ev("response.created", {
        response: { ...response, status: "in_progress", output: [] },
      }),
    ];
    output.forEach((item, output_index) => {
      events.push(ev("response.output_item.added", { output_index, item }));
      events.push(ev("response.output_item.done", { output_index, item }));
    });
    events.push(ev("response.completed", { response }));
    return sse(events);
  },
};

/** The writer of each wire. */
export const WRITERS: Record<Wire, WireWriter> = {
  openai_chat: chat,
  anthropic_messages: messages,
  openai_responses: responses,
};
