/**
 * The Vercel AI SDK's own multi-step tool loop through the model gateway on
 * each wire, whole and streamed: the framework gets what the upstream sent,
 * and the gateway records each call once with its result.
 *
 * @module
 */
import { generateText, stepCountIs, streamText } from "ai";
import { assertEquals, assertOk } from "../_assert.ts";
import { assertKeyNowhere, KEY, ofKind, startGateway } from "./_gateway.ts";
import {
  frameworkModels,
  type FrameworkWire,
  PARALLEL_CALLS,
  scriptedCallId,
  type ToolLog,
  toolResultsSent,
  weatherTools,
} from "./_ai_sdk.ts";

const WIRES: FrameworkWire[] = ["chat", "responses", "messages"];
const USAGE = [
  { input_tokens: 30, output_tokens: 10 },
  { input_tokens: 60, output_tokens: 12 },
];

for (const wire of WIRES) {
  for (const streaming of [false, true]) {
    const how = streaming ? "streamText()" : "generateText()";
    Deno.test(`the model gateway carries and records the AI SDK's ${how} tool loop over ${wire}`, async () => {
      await using rig = await startGateway();
      rig.up.push(
        { text: "Let me look.", toolCalls: PARALLEL_CALLS, usage: USAGE[0] },
        { text: "Paris: 21 degrees at 10:42.", usage: USAGE[1] },
      );
      const model = frameworkModels(rig.bases, {
        apiKey: KEY,
        headers: rig.headers,
      })[wire];
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
      if (streaming) {
        const r = streamText(options);
        const parts: string[] = [];
        for await (const p of r.fullStream) parts.push(p.type);
        assertOk(parts.includes("tool-input-delta"), parts.join(","));
        assertOk(!parts.includes("error"), parts.join(","));
        text = await r.text;
      } else {
        text = (await generateText(options)).text;
      }
      assertEquals(text, "Paris: 21 degrees at 10:42.");
      assertEquals(log.length, 2);
      const ids = [0, 1].map((i) => scriptedCallId(wire, 1, i));
      assertEquals(
        Object.keys(toolResultsSent(wire, rig.up.requests[1].json)).sort(),
        ids,
      );

      const events = await rig.events();
      const requested = ofKind(events, "model.requested");
      const responded = ofKind(events, "model.responded");
      assertEquals(requested.length, 2);
      assertEquals(
        responded.map((e) => {
          const u = (e.payload.response as { usage: Record<string, unknown> })
            .usage;
          return [e.parent_event_id, u.input_tokens, u.output_tokens];
        }),
        requested.map((e, i) => [
          e.event_id,
          USAGE[i].input_tokens,
          USAGE[i].output_tokens,
        ]),
      );
      const started = ofKind(events, "tool.call.started");
      assertEquals(
        started.map((e) => [e.payload.host_call_id, e.payload.arguments]),
        ids.map((id, i) => [id, PARALLEL_CALLS[i].arguments]),
      );
      const completed = ofKind(events, "tool.call.completed");
      assertEquals(
        completed.map((e) => [e.payload.host_call_id, e.parent_event_id]),
        started.map((e) => [e.payload.host_call_id, e.event_id]),
      );
      assertEquals(completed.map((e) => e.payload.result), [
        { city: "Paris", temperature: 21 },
        { timezone: "Europe/Paris", time: "10:42" },
      ]);
      await assertKeyNowhere(rig);
    });
  }
}
