/**
 * The gateway writing Anthropic Messages: the request's tools narrowed, asked again with refusals, and the
 * gateway's own answers, whole or streamed.
 *
 * @module
 */
import {
  callsWithIds,
  json,
  nameField,
  narrowTools,
  refusalTexts,
  sse,
  uid,
  type WireWriter,
} from "../../wire_writers.ts";

/** Anthropic Messages. */
export const messages: WireWriter = {
  withTools(body, n) {
    return narrowTools(body, {
      n,
      nameOf: nameField,
      withSchema: (t, schema) => ({
        ...t,
        input_schema: schema,
      }),
    });
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
