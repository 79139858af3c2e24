/**
 * One neutral chat shape, one wire code: a chat request written by a wire's
 * `chat.ts` (what the bindings send) reads back through the same wire's
 * reader (what the gateway records and the scripted server reads) as the
 * same conversation, and an answer reads the same through the binding's
 * view and the gateway's.
 */
import { deepEqual, equal } from "node:assert/strict";
import type { ChatRequest } from "../../lib/models/chat_types.ts";
import { OpenAiChatModel } from "../../lib/models/openai_chat.ts";
import { AnthropicMessagesModel } from "../../lib/models/anthropic_messages.ts";
import {
  chatMessagesOfOpenAi,
  openaiChatBody,
  type OpenAiChatWireMessage,
  readOpenAiChatAnswer,
} from "../../lib/model_gateway/wires/openai_chat/chat.ts";
import { openaiChatWire } from "../../lib/model_gateway/wires/openai_chat/read.ts";
import {
  anthropicBody,
  readAnthropicChatAnswer,
} from "../../lib/model_gateway/wires/anthropic_messages/chat.ts";
import { anthropicMessagesWire } from "../../lib/model_gateway/wires/anthropic_messages/read.ts";
import { chatToolCallOf } from "../../lib/model_gateway/chat_shape.ts";

const REQUEST: ChatRequest = {
  messages: [
    { role: "system", content: "You help." },
    { role: "user", content: "Find order 7." },
    {
      role: "assistant",
      content: null,
      tool_calls: [
        {
          id: "call_a",
          name: "get_order",
          arguments: { order_id: "7" },
          raw_arguments: '{ "order_id": "7" }',
        },
        {
          id: "call_b",
          name: "note",
          arguments: null,
          raw_arguments: "not json",
          arguments_error: "the arguments are not valid JSON",
        },
      ],
    },
    {
      role: "tool",
      tool_call_id: "call_a",
      name: "get_order",
      content: '{"status":"pending"}',
    },
    { role: "tool", tool_call_id: "call_b", name: "note", content: "error" },
    { role: "assistant", content: "Order 7 is pending." },
  ],
  tools: [{
    name: "get_order",
    description: "An order by id",
    parameters: {
      type: "object",
      properties: { order_id: { type: "string" } },
    },
  }],
  max_tokens: 64,
};

Deno.test("OpenAI Chat: the body the binding writes reads back, through the wire's reader, as the same chat messages", () => {
  const body = new OpenAiChatModel("m", {
    baseUrl: "http://127.0.0.1:9/v1",
    apiKey: "k",
  }).wireRequest(REQUEST);
  deepEqual(
    body,
    openaiChatBody(REQUEST, { model: "m", maxTokensField: "max_tokens" }),
  );
  const back = chatMessagesOfOpenAi(body.messages as OpenAiChatWireMessage[]);
  // Parsed arguments travel re-serialized; unparsed ones as sent.
  const expected = structuredClone(REQUEST.messages);
  const calls = (expected[2] as { tool_calls: { raw_arguments: string }[] })
    .tool_calls;
  calls[0].raw_arguments = '{"order_id":"7"}';
  const back2 = back[2] as { tool_calls: { arguments_error?: string }[] };
  equal(
    back2.tool_calls[1].arguments_error?.startsWith(
      "the arguments are not valid JSON",
    ),
    true,
  );
  delete back2.tool_calls[1].arguments_error;
  delete (calls[1] as { arguments_error?: string }).arguments_error;
  deepEqual(back, expected);
  // The gateway's recording view of the same body: the same roles, calls and results.
  const read = openaiChatWire.request(body);
  deepEqual(read.messages.map((m) => m.role), [
    "system",
    "user",
    "assistant",
    "tool",
    "tool",
    "assistant",
  ]);
  deepEqual(read.tools.map((t) => t.name), ["get_order"]);
  equal(read.params.max_tokens, 64);
  deepEqual(
    read.messages[2].tool_calls.map((c) => chatToolCallOf(c).arguments),
    [{ order_id: "7" }, null],
  );
});

Deno.test("OpenAI Chat: an answer reads the same through the binding's view and the gateway's", () => {
  const answer = {
    id: "chatcmpl-1",
    model: "m-2",
    choices: [{
      index: 0,
      finish_reason: "tool_calls",
      message: {
        role: "assistant",
        content: "Looking.",
        tool_calls: [{
          id: "call_1",
          type: "function",
          function: { name: "get_order", arguments: '{"order_id": "7"}' },
        }],
      },
    }],
    usage: { prompt_tokens: 11, completion_tokens: 5, total_tokens: 16 },
  };
  const chat = readOpenAiChatAnswer(answer, "m");
  const norm = openaiChatWire.response(answer);
  equal(chat.content, norm.text);
  equal(chat.finish_reason, norm.stop_reason);
  equal(chat.model, norm.model);
  deepEqual(chat.usage, {
    prompt_tokens: norm.usage?.input_tokens,
    completion_tokens: norm.usage?.output_tokens,
  });
  deepEqual(
    chat.tool_calls,
    norm.tool_calls.map((c) => ({
      ...chatToolCallOf(c, '{"order_id": "7"}'),
    })),
  );
});

Deno.test("Anthropic Messages: the body the binding writes reads back through the wire's reader; an answer reads the same both ways", () => {
  const body = new AnthropicMessagesModel("m", {
    baseUrl: "http://127.0.0.1:9",
    apiKey: "k",
  }).wireRequest(REQUEST);
  deepEqual(body, anthropicBody("m", REQUEST).body);
  const read = anthropicMessagesWire.request(body);
  // The system text travels apart (not a message); tool results ride in a user turn.
  equal(body.system, "You help.");
  deepEqual(read.messages.map((m) => m.role), [
    "user",
    "assistant",
    "user",
    "assistant",
  ]);
  deepEqual(read.messages[1].tool_calls.map((c) => [c.id, c.arguments]), [
    ["call_a", { order_id: "7" }],
    ["call_b", {}],
  ]);
  deepEqual(read.messages[2].tool_results.map((r) => [r.id, r.text]), [
    ["call_a", '{"status":"pending"}'],
    ["call_b", "error"],
  ]);
  const answer = {
    id: "msg_1",
    model: "m-2",
    content: [
      { type: "text", text: "Looking." },
      { type: "tool_use", id: "toolu_1", name: "get_order", input: { a: 1 } },
    ],
    stop_reason: "tool_use",
    usage: { input_tokens: 9, cache_read_input_tokens: 4, output_tokens: 3 },
  };
  const { answer: chat } = readAnthropicChatAnswer(answer, {
    model: "m",
    output: null,
  });
  const norm = anthropicMessagesWire.response(answer);
  equal(chat.content, norm.text);
  equal(chat.finish_reason, "tool_calls");
  equal(chat.model, norm.model);
  deepEqual(chat.usage, { prompt_tokens: 13, completion_tokens: 3 });
  deepEqual(
    chat.tool_calls,
    norm.tool_calls.map((c) => chatToolCallOf(c, JSON.stringify({ a: 1 }))),
  );
});
