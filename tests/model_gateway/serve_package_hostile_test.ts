/**
 * A served package's check does not fail open (issue 44, items 1 and 2): a
 * write the package refuses never reaches the client in any shape the
 * client reads — a stream that ends without `data: [DONE]`, server-sent
 * events sent as `application/json`, a legacy `function_call` — and what
 * the gateway cannot check (a call in `choices[1]`, an answer larger than it
 * reads) is not relayed: the client gets the API's error, counted on
 * `/health` and recorded. (`n > 1` and a conversation ending with the
 * model's turn are passed through, said in `x-harness-package-skipped`.)
 *
 * @module
 */
import { assertEquals, assertOk } from "../_assert.ts";
import { GatewayDriver } from "../../lib/forms/agent/gateway_driver.ts";
import { RetailEnv } from "../../eval/envs/tau2/mod.ts";
import { type GatewayRig, ofKind, startGateway } from "./_gateway.ts";
import { type ChatMessage, chatUntilForwarded } from "./_served_loop.ts";
import { RETAIL_CHAT_TOOLS } from "./_retail_agent.ts";
import { RETAIL_INSTRUCTIONS, servedRetail } from "./_served_retail.ts";
import type { ModelGatewayOptions } from "../../lib/model_gateway/mod.ts";

const retail = servedRetail();
const ASK =
  "Hi, my email is sofia.li7352@example.com. Please cancel my pending order #W8855135, I no longer need it.";
/** An order of another customer: the conversation never shows it. */
const OUTSIDE = { order_id: "#W9300146", reason: "no longer needed" };

async function servedRig(
  capture: string,
  gateway: ModelGatewayOptions = {},
): Promise<GatewayRig> {
  return await startGateway({
    capture,
    gateway: { ...gateway, packages: { "": new GatewayDriver(retail.pkg) } },
  });
}

async function health(rig: GatewayRig) {
  return (await (await fetch(`${rig.server.url}/health`)).json())
    .model_gateway;
}

/** The conversation once the package's lookups are made (one answer used). */
async function conversation(rig: GatewayRig): Promise<ChatMessage[]> {
  rig.up.push({ text: "Let me check." });
  const client = rig.openai();
  const messages: ChatMessage[] = [
    { role: "system", content: RETAIL_INSTRUCTIONS },
    { role: "user", content: ASK },
  ];
  await chatUntilForwarded(
    async (m) => {
      const { data, response } = await client.chat.completions.create({
        model: "gpt-agent",
        messages: m,
        tools: RETAIL_CHAT_TOOLS,
      }).withResponse();
      return {
        data,
        served: response.headers.get("x-harness-served") === "package",
      };
    },
    messages,
    new RetailEnv(retail.db),
  );
  return messages;
}

function chunk(delta: Record<string, unknown>, finish: string | null = null) {
  return `data: ${
    JSON.stringify({
      id: "chatcmpl-h",
      object: "chat.completion.chunk",
      created: 1,
      model: "gpt-agent",
      choices: [{ index: 0, delta, finish_reason: finish }],
    })
  }\n\n`;
}

/** A streamed call of cancel_pending_order with `args`. */
function streamedCall(args: unknown, { done = true } = {}): string {
  return chunk({ role: "assistant", content: null }) +
    chunk({
      tool_calls: [{
        index: 0,
        id: "call_h1",
        type: "function",
        function: {
          name: "cancel_pending_order",
          arguments: JSON.stringify(args),
        },
      }],
    }) + chunk({}, "tool_calls") + (done ? "data: [DONE]\n\n" : "");
}

/** The answer's text, whole or streamed. */
function textOf(body: string): string {
  if (!body.startsWith("data:")) {
    return JSON.parse(body).choices[0].message.content ?? "";
  }
  return body.split("\n").filter((l) => l.startsWith("data: {"))
    .map((l) => JSON.parse(l.slice(6)).choices[0]?.delta?.content ?? "")
    .join("");
}

/** Send the conversation as the client would; the raw answer. */
async function send(
  rig: GatewayRig,
  messages: ChatMessage[],
  extra: Record<string, unknown> = {},
): Promise<{ status: number; text: string }> {
  const res = await fetch(`${rig.bases.openaiBase}/chat/completions`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: "Bearer sk-hostile-serving-0001",
      ...rig.headers,
    },
    body: JSON.stringify({
      model: "gpt-agent",
      messages,
      tools: RETAIL_CHAT_TOOLS,
      ...extra,
    }),
  });
  return { status: res.status, text: await res.text() };
}

Deno.test("a refused write is caught in every shape the client reads: a stream without [DONE], SSE sent as JSON, a legacy function_call", async () => {
  await using rig = await servedRig("cap_shapes");
  const messages = await conversation(rig);
  const shapes: {
    name: string;
    answer: Parameters<GatewayRig["up"]["push"]>[0];
    stream: boolean;
  }[] = [
    {
      name: "a stream that ends without data: [DONE]",
      answer: {
        body: streamedCall(OUTSIDE, { done: false }),
        headers: { "content-type": "text/event-stream" },
      },
      stream: true,
    },
    {
      name: "server-sent events sent as application/json",
      answer: {
        body: streamedCall(OUTSIDE),
        headers: { "content-type": "application/json" },
      },
      stream: true,
    },
    {
      name: "a legacy function_call",
      answer: {
        body: JSON.stringify({
          id: "chatcmpl-l",
          object: "chat.completion",
          created: 1,
          model: "gpt-agent",
          choices: [{
            index: 0,
            message: {
              role: "assistant",
              content: null,
              function_call: {
                name: "cancel_pending_order",
                arguments: JSON.stringify(OUTSIDE),
              },
            },
            finish_reason: "function_call",
          }],
        }),
      },
      stream: false,
    },
  ];
  let refusals = 0;
  for (const shape of shapes) {
    // The refused answer, then one the package lets through.
    rig.up.push(shape.answer, { text: "I have checked your order." });
    const got = await send(rig, messages, shape.stream ? { stream: true } : {});
    assertEquals(got.status, 200, shape.name);
    assertOk(!got.text.includes("#W9300146"), `${shape.name}: ${got.text}`);
    assertOk(textOf(got.text).includes("I have checked"), shape.name);
    refusals++;
    assertEquals((await health(rig)).refusals, refusals, shape.name);
  }
});

Deno.test("what a package cannot check is not relayed: a call in choices[1], an answer larger than it reads", async () => {
  await using rig = await servedRig("cap_unchecked", {
    maxAnswerBytes: 256 * 1024,
  });
  const messages = await conversation(rig);
  // A second choice carrying the write: the client would read it.
  rig.up.push({
    body: JSON.stringify({
      id: "chatcmpl-2",
      object: "chat.completion",
      created: 1,
      model: "gpt-agent",
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: "Sure." },
          finish_reason: "stop",
        },
        {
          index: 1,
          message: {
            role: "assistant",
            content: null,
            tool_calls: [{
              id: "call_2",
              type: "function",
              function: {
                name: "cancel_pending_order",
                arguments: JSON.stringify(OUTSIDE),
              },
            }],
          },
          finish_reason: "tool_calls",
        },
      ],
    }),
  });
  const two = await send(rig, messages);
  assertEquals(two.status, 502);
  assertOk(!two.text.includes("#W9300146"));
  assertOk(JSON.parse(two.text).error.message.includes("more than one choice"));
  // An answer past what the package reads (an endless stream held whole
  // grew the server by gigabytes): not relayed.
  rig.up.push({
    body: chunk({ role: "assistant", content: "" }) +
      chunk({ content: "x".repeat(1024) }).repeat(512) + "data: [DONE]\n\n",
    headers: { "content-type": "text/event-stream" },
  });
  const big = await send(rig, messages, { stream: true });
  assertEquals(big.status, 502);
  assertOk(JSON.parse(big.text).error.message.includes("larger than"));
  const h = await health(rig);
  assertEquals(h.unchecked, 2);
  // Recorded, each with why.
  const events = await rig.events();
  const outcomes = ofKind(events, "model.requested")
    .map((e) => (e.payload.package as { outcome: string } | undefined)?.outcome)
    .filter((o) => o === "unchecked");
  assertEquals(outcomes.length, 1);
  // Nothing held once recorded.
  assertEquals((await health(rig)).kept_bytes, 0);
});
