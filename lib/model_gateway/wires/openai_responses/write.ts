/**
 * The gateway writing OpenAI Responses: the request's tools narrowed, asked again with refusals, and the
 * gateway's own answers, whole or streamed.
 *
 * @module
 */
import {
  callsWithIds,
  json,
  nameField,
  narrowTools,
  type Obj,
  refusalTexts,
  sse,
  uid,
  type WireWriter,
} from "../../wire_writers.ts";

/** OpenAI Responses. */
export const responses: WireWriter = {
  withTools(body, n) {
    return narrowTools(body, {
      n,
      nameOf: nameField,
      withSchema: (t, schema) => ({
        ...t,
        parameters: schema,
      }),
    });
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
