/**
 * The scripted upstream carries the Vercel AI SDK's own multi-step tool loop
 * on each wire (Chat Completions, Responses, Messages), whole and streamed,
 * driven directly (no gateway).
 *
 * @module
 */
import { generateText, stepCountIs, streamText } from "ai";
import { assertEquals, assertOk } from "../_assert.ts";
import { startUpstreams } from "./_upstreams.ts";
import {
  frameworkModels,
  type FrameworkWire,
  PARALLEL_CALLS,
  scriptedCallId,
  type ToolLog,
  toolResultsSent,
  weatherTools,
} from "./_ai_sdk.ts";

const KEY = "sk-ai-sdk-upstream-key-77c2";
const WIRES: FrameworkWire[] = ["chat", "responses", "messages"];
const PATHS: Record<FrameworkWire, string> = {
  chat: "/v1/chat/completions",
  responses: "/v1/responses",
  messages: "/v1/messages",
};

for (const wire of WIRES) {
  for (const streaming of [false, true]) {
    const how = streaming ? "streamText()" : "generateText()";
    Deno.test(`startUpstreams() carries the AI SDK's ${how} tool loop over ${wire}`, async () => {
      await using up = startUpstreams([
        {
          text: "Let me look.",
          toolCalls: PARALLEL_CALLS,
          usage: { input_tokens: 30, output_tokens: 10 },
        },
        {
          text: "Paris: 21 degrees at 10:42.",
          usage: { input_tokens: 60, output_tokens: 12 },
        },
      ]);
      const model = frameworkModels(up, { apiKey: KEY })[wire];
      const log: ToolLog = [];
      const options = {
        model,
        tools: weatherTools(log),
        prompt: "Weather and time in Paris?",
        stopWhen: stepCountIs(4),
        maxOutputTokens: 1024,
        maxRetries: 0,
      };
      let text: string;
      let steps: number;
      let usage: { inputTokens?: number; outputTokens?: number };
      if (streaming) {
        const r = streamText(options);
        const parts: string[] = [];
        for await (const p of r.fullStream) parts.push(p.type);
        assertOk(parts.includes("tool-input-delta"), parts.join(","));
        text = await r.text;
        steps = (await r.steps).length;
        usage = await r.totalUsage;
      } else {
        const r = await generateText(options);
        text = r.text;
        steps = r.steps.length;
        usage = r.totalUsage;
      }
      assertEquals(text, "Paris: 21 degrees at 10:42.");
      assertEquals(steps, 2);
      assertEquals(usage.inputTokens, 90);
      assertEquals(usage.outputTokens, 22);
      assertEquals(log.map((c) => [c.name, c.input]), [
        ["get_weather", { city: "Paris", unit: "celsius" }],
        ["get_time", { timezone: "Europe/Paris" }],
      ]);
      assertEquals(up.requests.map((r) => r.path), [
        PATHS[wire],
        PATHS[wire],
      ]);
      assertEquals(up.requests.map((r) => r.json?.stream ?? false), [
        streaming,
        streaming,
      ]);
      const results = toolResultsSent(wire, up.requests[1].json);
      assertEquals(Object.keys(results).sort(), [
        scriptedCallId(wire, 1, 0),
        scriptedCallId(wire, 1, 1),
      ]);
      assertOk(results[scriptedCallId(wire, 1, 0)].includes("21"));
      const auth = wire === "messages"
        ? up.requests[0].headers["x-api-key"]
        : up.requests[0].headers.authorization;
      assertEquals(auth, wire === "messages" ? KEY : `Bearer ${KEY}`);
    });
  }
}
