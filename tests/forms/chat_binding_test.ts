import {
  assertEquals,
  assertMatch,
  assertOk,
  assertRejects,
} from "../_assert.ts";
import {
  type ChatResponse,
  ModelResponseError,
  openModel,
} from "../../lib/models/mod.ts";
import { chatModelBinding } from "../../lib/forms/tree/chat_binding.ts";
import type { Signature } from "../../lib/package/ir.ts";
import { fieldProblem } from "../../lib/package/signature_check.ts";
import { completion, startOpenAiServer } from "../models/_openai_server.ts";

const PREDICT: Signature = {
  id: "sig.classify",
  kind: "predict",
  inputs: { request: { type: "string" } },
  outputs: {
    intent: { type: "string", enum: ["refund", "exchange"] },
    item_index: { type: "integer", minimum: 0, description: "Which item" },
    items: { type: "array" },
  },
  instructions: "Classify the customer's request.",
};

const REACT: Signature = {
  id: "sig.resolve",
  kind: "react",
  inputs: { request: { type: "string" } },
  outputs: {},
  instructions: "Resolve the request with the tools.",
};

function binding(baseUrl: string, seen: ChatResponse[] = []) {
  return chatModelBinding(
    openModel("openai/test-model", { url: baseUrl, env: {} }),
    {
      maxTokens: 200,
      onResponse: (r) => seen.push(r),
      tools: {
        get_order: {
          name: "get_order",
          description: "Read an order",
          parameters: {
            type: "object",
            properties: { order_id: { type: "string" } },
            required: ["order_id"],
          },
        },
      },
    },
  );
}

Deno.test("chatModelBinding().predict() asks for the signature's outputs as strict structured output and returns them parsed", async () => {
  await using s = startOpenAiServer([
    completion({
      content: JSON.stringify({
        intent: "refund",
        item_index: 1,
        items: '["mug", "lamp"]',
      }),
      usage: { prompt_tokens: 90, completion_tokens: 12 },
    }),
  ]);
  const seen: ChatResponse[] = [];
  const b = binding(s.baseUrl, seen);
  assertEquals(b.lastUsage, null);
  const out = await b.predict(PREDICT, { request: "refund the lamp" });
  for (const [name, f] of Object.entries(PREDICT.outputs)) {
    assertEquals(fieldProblem(out[name], f), null, name);
  }
  assertEquals(out, {
    intent: "refund",
    item_index: 1,
    items: ["mug", "lamp"],
  });
  assertEquals(b.lastUsage, { prompt_tokens: 90, completion_tokens: 12 });
  assertEquals(seen.length, 1);
  assertEquals(b.id, "openai/test-model");
  const body = s.requests[0].body!;
  assertEquals(body.max_tokens, 200);
  assertEquals(body.response_format, {
    type: "json_schema",
    json_schema: {
      name: "sig_classify",
      strict: true,
      schema: {
        type: "object",
        properties: {
          intent: { type: "string", enum: ["refund", "exchange"] },
          item_index: {
            type: "integer",
            minimum: 0,
            description: "Which item",
          },
          items: {
            type: "string",
            description: "the JSON text of a value of type array",
          },
        },
        required: ["intent", "item_index", "items"],
        additionalProperties: false,
      },
    },
  });
  const messages = body.messages as { role: string; content: string }[];
  assertEquals(messages[0].role, "system");
  assertMatch(messages[0].content, /^Classify the customer's request\./);
  assertEquals(messages[1].role, "user");
  assertMatch(messages[1].content, /"request": "refund the lamp"/);
});

Deno.test("chatModelBinding().predict() fails with ModelResponseError on an answer that does not parse, or a refusal", async () => {
  await using s = startOpenAiServer([
    completion({
      content: JSON.stringify({
        intent: "refund",
        item_index: 1,
        items: "[mu",
      }),
    }),
    completion({ content: '{"intent": "refund"' }),
    completion({ refusal: "No." }),
  ]);
  const b = binding(s.baseUrl);
  const e1 = await assertRejects(
    () => b.predict(PREDICT, { request: "x" }),
    ModelResponseError,
  );
  assertMatch(e1.message, /sig\.classify\.items \(array\).*not JSON/);
  const e2 = await assertRejects(
    () => b.predict(PREDICT, { request: "x" }),
    ModelResponseError,
  );
  assertMatch(e2.message, /not JSON/);
  const e3 = await assertRejects(
    () => b.predict(PREDICT, { request: "x" }),
    ModelResponseError,
  );
  assertMatch(e3.message, /refused sig\.classify: "No\."/);
});

// Over 80 lines: one scenario end to end, its steps and checks in order.
Deno.test("chatModelBinding().react() offers the toolset and finish, shows the history as its own calls, and maps the answer", async () => {
  await using s = startOpenAiServer([
    completion({
      tool_calls: [{ name: "get_order", arguments: '{"order_id":"W1"}' }],
      usage: { prompt_tokens: 50, completion_tokens: 9 },
    }),
    completion({
      tool_calls: [{
        name: "finish",
        arguments: '{"result":{"status":"refunded"}}',
      }],
      usage: { prompt_tokens: 80, completion_tokens: 6 },
    }),
  ]);
  const b = binding(s.baseUrl);
  const orders: Record<string, unknown> = { W1: { status: "delivered" } };
  // the loop the tree engine runs for a react leaf
  const history: unknown[] = [];
  const context = { tools: ["get_order", "cancel"], history, inputs: {} };
  const d1 = await b.react(REACT, { ...context, inputs: { request: "W1?" } });
  assertEquals(d1, { tool: "get_order", arguments: { order_id: "W1" } });
  if (!("tool" in d1)) throw new Error("expected a tool call");
  history.push({
    ...d1,
    result: orders[d1.arguments.order_id as string],
  });
  history.push({
    tool: "cancel",
    arguments: { order_id: "W1" },
    error: "not allowed",
  });
  const d2 = await b.react(REACT, { ...context, inputs: { request: "W1?" } });
  assertEquals(d2, { done: true, result: { status: "refunded" } });
  assertEquals(b.lastUsage, { prompt_tokens: 80, completion_tokens: 6 });
  assertEquals(b.totalUsage, { prompt_tokens: 130, completion_tokens: 15 });

  const first = s.requests[0].body!;
  assertEquals(first.tool_choice, "required");
  const tools = first.tools as {
    function: { name: string; parameters: unknown };
  }[];
  assertEquals(tools.map((t) => t.function.name), [
    "get_order",
    "cancel",
    "finish",
  ]);
  assertEquals(tools[0].function.parameters, {
    type: "object",
    properties: { order_id: { type: "string" } },
    required: ["order_id"],
  });
  assertEquals(tools[1].function.parameters, {
    type: "object",
    properties: {},
  });
  const second = s.requests[1].body!.messages as Record<string, unknown>[];
  assertEquals(second.slice(2), [
    {
      role: "assistant",
      content: null,
      tool_calls: [{
        id: "call_1",
        type: "function",
        function: { name: "get_order", arguments: '{"order_id":"W1"}' },
      }],
    },
    {
      role: "tool",
      tool_call_id: "call_1",
      content: '{"status":"delivered"}',
    },
    {
      role: "assistant",
      content: null,
      tool_calls: [{
        id: "call_2",
        type: "function",
        function: { name: "cancel", arguments: '{"order_id":"W1"}' },
      }],
    },
    { role: "tool", tool_call_id: "call_2", content: "Error: not allowed" },
  ]);
});

Deno.test("chatModelBinding().react() refuses text instead of a call, and arguments that are not JSON", async () => {
  await using s = startOpenAiServer([
    completion({ content: "I think it is delivered." }),
    completion({ tool_calls: [{ name: "get_order", arguments: "{order" }] }),
  ]);
  const b = binding(s.baseUrl);
  const ctx = { tools: ["get_order"], history: [], inputs: { request: "x" } };
  const e1 = await assertRejects(() => b.react(REACT, ctx), ModelResponseError);
  assertMatch(e1.message, /text instead of calling a tool or finish/);
  const e2 = await assertRejects(() => b.react(REACT, ctx), ModelResponseError);
  assertMatch(e2.message, /called get_order .* not valid JSON/);
  assertOk(b.lastUsage !== null);
});

Deno.test("chatModelBinding().react() renames finish when the toolset has a tool of that name", async () => {
  await using s = startOpenAiServer([
    completion({ tool_calls: [{ name: "finish_leaf", arguments: "{}" }] }),
  ]);
  const d = await binding(s.baseUrl).react(REACT, {
    tools: ["finish"],
    history: [],
    inputs: {},
  });
  assertEquals(d, { done: true, result: null });
  const names = (s.requests[0].body!.tools as { function: { name: string } }[])
    .map((t) => t.function.name);
  assertEquals(names, ["finish", "finish_leaf"]);
});
